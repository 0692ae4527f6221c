"""JAX and PyTorch, imported on first use.

Op modules name their framework at module level, but importing JAX or PyTorch costs seconds; planning,
listing and validating a config must not pay it (a bad config is answered in well under a second).
"""

from __future__ import annotations

import lazy_loader

jax = lazy_loader.load("jax")
torch = lazy_loader.load("torch")
