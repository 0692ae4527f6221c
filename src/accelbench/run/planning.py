"""What a run will do, decided before the runner, sinks and console are imported (a fraction of a
second a bad config or option is answered without): options checked, the config loaded and planned."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Callable

from accelbench.config.loader import LoadedConfig, load_config, one_off_config
from accelbench.config.planner import plan
from accelbench.core.case import Case
from accelbench.core.options import RunOptions
from accelbench.errors import UserError, visible
from accelbench.names import names_no_file
from accelbench.platform import processes


def check_options(options: RunOptions) -> None:
    if options.resume and options.overwrite:
        raise UserError(
            "--resume continues the results file and --overwrite replaces it; give one",
            key="--resume",
        )
    if options.output is not None and names_no_file(options.output):
        raise UserError(
            "names no file: -o takes a results CSV (--output-dir a folder)", key="--output"
        )
    if options.output and options.output_dir_given:
        raise UserError("--output and --output-dir both place the rows; give one", key="--output")
    for broken, why in LABEL_RULES:
        if options.name is not None and broken(options.name):
            raise UserError(f"{why}; give a label compare and runs can name", key="--name")
    if options.name is not None and options.output:
        raise UserError(
            "labels a stored run; an -o file is not stored (no record, not numbered), so "
            "`compare LABEL` could never find it: give one (compare the file by its path)",
            key="--name",
        )


# why `compare LABEL` could not name a --name afterwards (digits: a run number; a path: a file)
LABEL_RULES: tuple[tuple[Callable[[str], bool], str], ...] = (
    (lambda s: not s.strip(), "is empty"),
    (str.isdigit, "looks like a run number"),
    (
        lambda s: "/" in s or os.sep in s or s.lower().endswith((".csv", ".jsonl")),
        "looks like a file (a path separator or a results file's suffix)",
    ),
    (lambda s: visible(s) != s, "holds a control character"),
)


def load_and_plan(
    path: str, options: RunOptions, devices: Callable[[], int] | None = None
) -> tuple[LoadedConfig, list[Case]]:
    """The config (a file, or a one-off command line) and its cases (`devices`: JAX's, where asked)."""
    if options.one_off:
        loaded = one_off_config(options.one_off[0], options.one_off[1:])
    else:
        loaded = load_config(path)
    # in a job, process 0 alone says what the plan warns of (its errors every process raises)
    quiet = contextlib.redirect_stderr(io.StringIO())
    with contextlib.nullcontext() if processes.primary() else quiet:
        return loaded, plan(loaded, options, devices or jax_device_count)


def run_config(path: str, options: RunOptions) -> int:
    """Options checked, the config planned, then (the session's machinery imported only now) run."""
    check_options(options)
    loaded, cases = load_and_plan(path, options)
    from accelbench.run.session import run_planned

    return run_planned(loaded, cases, options)


def jax_device_count() -> int:
    """Devices JAX sees (a jax-bench mesh's default); counted by a child on a flag-group (TPU) host,
    which this process must not hold."""
    from accelbench.run.runner import flag_groups_apply, get_backend

    if not flag_groups_apply():  # every process's devices, as upstream's mesh spans a job's
        get_backend("jax")
        from accelbench.platform.frameworks import jax

        return int(jax.device_count())
    done = subprocess.run(
        [sys.executable, "-c", "import jax; print(jax.device_count())"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip().isdigit():
        raise UserError(f"cannot count JAX's devices: {done.stderr.strip()[-300:]}")
    return int(done.stdout.strip())


def plan_from_file(path: str, options: RunOptions | None = None) -> list[Case]:
    return load_and_plan(path, options or RunOptions())[1]
