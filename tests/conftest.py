import os
import textwrap
from pathlib import Path

import pytest

# Several host devices for the JAX sharding tests; must be set before JAX initialises.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

from accelbench.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SEED_EXAMPLES = Path(__file__).parent / "seed_examples"


@pytest.fixture
def write_yaml(tmp_path):
    def write(text: str, name: str = "config.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture
def run_cli(capsys):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""

    def run(*args: str):
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file())


def run_options(**given):
    """RunOptions of these fields, the rest of `given` as the declared flags of that name (`hw`,
    `output_path`, ...)."""
    import dataclasses

    from accelbench.core.options import RunOptions

    core = {f.name for f in dataclasses.fields(RunOptions)}
    options = RunOptions(**{k: v for k, v in given.items() if k in core})
    return options.with_flags(**{k: v for k, v in given.items() if k not in core})
