"""Device-accurate accelerator microbenchmarks for JAX and PyTorch. `accelbench.bench(fn, *args)` times
any callable (library.py, loaded on first use: importing the package stays cheap)."""

import sys
from typing import Any

__version__ = "0.1.0"

_LIBRARY = ("bench", "table", "save", "ab", "Result", "AbResult", "Table")


def __getattr__(name: str) -> Any:
    if name in _LIBRARY:
        from accelbench import library

        return getattr(library, name)
    raise AttributeError(f"module 'accelbench' has no attribute {name!r}")


if "jax" in sys.modules:  # a JAX program: JAX's CPU pool is sized when its client starts
    from accelbench.jax_backend.backend import start_on_cpu

    start_on_cpu()
