"""Where and with what a run happened: the environment columns of every row."""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import importlib.metadata
import os
import platform
import socket
import subprocess
import uuid
from pathlib import Path

from accelbench.platform.gpu_monitor import nvml

# Installed distributions whose versions decide a number (read from metadata: nothing is imported)
PACKAGES = tuple(
    "jax jaxlib libtpu jax-cuda12-plugin jax-cuda13-plugin torch torchao triton numpy".split()
)
# the environment flags the frameworks read (TORCHINDUCTOR_COMPILE_THREADS: set by the run where its
# compiled cases are few, issue 53)
FLAGS = tuple(
    "XLA_FLAGS LIBTPU_INIT_ARGS TPU_PREMAPPED_BUFFER_SIZE TPU_PREMAPPED_BUFFER_TRANSFER_THRESHOLD_BYTES"
    " CUDA_VISIBLE_DEVICES TORCHINDUCTOR_COMPILE_THREADS".split()
)
HARNESS = Path(__file__).resolve().parents[2]  # this harness's own checkout, where it runs from one


def _git(*args: str, root: Path | str = HARNESS) -> str | None:
    """A git command's output in the checkout holding `root`, or None (no git, no checkout, a failure)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


# set in a cluster pod (no checkout): the commit its wheel was built from
COMMIT = "ACCELBENCH_COMMIT"


@functools.lru_cache(maxsize=1)
def git_commit() -> str:
    return os.environ.get(COMMIT) or _git("rev-parse", "--short=12", "HEAD") or ""


def git_branch() -> str:
    return _git("rev-parse", "--abbrev-ref", "HEAD") or ""


@functools.lru_cache(maxsize=1)
def git_dirty() -> bool | None:
    """Whether the checkout has uncommitted changes to tracked files (None outside a git checkout)."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return None if status is None else bool(status)


@functools.lru_cache(maxsize=8)
def checkout(folder: Path | str = HARNESS) -> dict[str, object] | None:
    """The commit of the checkout holding `folder`, its date (a history's order) and whether tracked
    files differ from it; None outside a git checkout."""
    found = _git("log", "-1", "--format=%h %cI", "--abbrev=12", root=folder)
    if not found:
        return None
    commit, date = found.split()
    dirty = _git("status", "--porcelain", "--untracked-files=no", root=folder)
    return {"commit": commit, "date": date, "dirty": bool(dirty)}


@functools.lru_cache(maxsize=1)
def installed() -> dict[str, str]:
    """The versions of the packages that decide a number, as installed here (metadata only)."""
    found = {}
    for name in PACKAGES:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[name] = importlib.metadata.version(name)
    return found


@functools.lru_cache(maxsize=1)
def gpu_driver() -> str:
    """The NVIDIA driver version (nvidia-ml-py), or '' where there is none."""
    try:
        version = nvml().nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:
        return ""


def gpu_clocks() -> str:
    """Each NVIDIA GPU's SM and memory clocks (MHz) as the run starts ('' without NVML): an idle GPU
    reads low, a throttled one reads low under load."""
    try:
        lib = nvml()
        clocks = []
        for i in range(lib.nvmlDeviceGetCount()):
            handle = lib.nvmlDeviceGetHandleByIndex(i)
            sm = lib.nvmlDeviceGetClockInfo(handle, lib.NVML_CLOCK_SM)
            mem = lib.nvmlDeviceGetClockInfo(handle, lib.NVML_CLOCK_MEM)
            clocks.append(f"{i}:sm={sm},mem={mem}")
        return " ".join(clocks)
    except Exception:
        return ""


@functools.lru_cache(maxsize=1)
def cpu_name() -> str:
    """The processor's marketing name (what torchao's dashboard calls a CPU's arch), else its ISA."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def new_run_id() -> str:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{uuid.uuid4().hex[:6]}"


def env_flags() -> str:
    return " ".join(f"{k}={os.environ[k]}" for k in FLAGS if os.environ.get(k))


FLAG_LISTS = ("LIBTPU_INIT_ARGS", "XLA_FLAGS")  # space-separated flags, where the last one wins


def apply_process_env(process_env: dict[str, str]) -> None:
    """Set a benchmark's environment in this (fresh) process; a user's flag list comes after the
    benchmark's, so theirs win (jax-bench replaces the user's)."""
    for key, value in process_env.items():
        own = os.environ.get(key, "") if key in FLAG_LISTS else ""
        os.environ[key] = f"{value} {own}".strip()


def base_environment(run_id: str) -> dict[str, object]:
    """What every row of a run shares: host, code, packages, driver and the flags frameworks read."""
    return {
        "run_id": run_id,
        "host": socket.gethostname(),
        "git_commit": git_commit(),
        "git_dirty": git_dirty(),
        "packages": " ".join(f"{k}={v}" for k, v in installed().items()),  # one cell
        "gpu_driver": gpu_driver(),
        "gpu_clocks_mhz_at_start": gpu_clocks(),
        "env_flags": env_flags(),
        "host_cpu_count": os.cpu_count(),
        "cpu_model": cpu_name(),
        "python_version": platform.python_version(),
    }


def run_environment() -> dict[str, object]:
    """Where a run happened, structured (the run store's, once a run; rows carry it flattened)."""
    return {
        "host": socket.gethostname(),
        "cpu_model": cpu_name(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
        "packages": installed(),
        "git": checkout(),
        "gpu": {"driver": gpu_driver(), "clocks_mhz_at_start": gpu_clocks()},
        "env_flags": {k: os.environ[k] for k in FLAGS if os.environ.get(k)},
    }


def timestamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def cpu_wait_s() -> float | None:
    """Seconds this process's threads have waited, runnable, for a CPU (Linux schedstat's run delay):
    what other processes took from a host clock. None where the system does not say."""
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    total = 0
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as stat:
                total += int(stat.read().split()[1])
        except (OSError, IndexError, ValueError):  # a thread that ended, or no schedstat
            continue
    return total / 1e9
