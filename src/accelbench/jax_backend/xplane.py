"""Per-iteration device time from a JAX profiler trace (XSpace), read with jax.profiler.ProfileData.
GPU: kernel events on the device plane's stream lines, tagged with the `hlo_module` stat.
TPU: one event per execution on the `XLA Modules` line; ops on `XLA Ops` give the breakdown.
CPU: thunk events on host threads, tagged with `hlo_module` and a per-execution `run_id`."""

from __future__ import annotations

import contextlib
import glob
import os
import statistics
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from accelbench.measure.attribution import IterationKernels, KernelEvent
from accelbench.measure.attribution import breakdown as breakdown


class TraceError(Exception):
    """The trace cannot give device time for this case (never silently replaced by host time)."""


class Bystander(TraceError):
    """A device plane without events of the module: passed over where every device is read."""


def find_xplane(trace_dir: str) -> str:
    """The newest *.xplane.pb that jax.profiler wrote under trace_dir."""
    paths = glob.glob(os.path.join(trace_dir, "plugins", "profile", "*", "*.xplane.pb"))
    if not paths:
        raise TraceError(f"no .xplane.pb under {trace_dir}/plugins/profile")
    return max(paths, key=os.path.getmtime)


def _events(line: Any) -> list[KernelEvent]:
    # jaxlib's stats iterator is a builtin type without __module__: Python 3.12 warns once per line
    # read (116 times in a test run); a defect of the binding, not of this code or the user's run
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "builtin type .* has no __module__", DeprecationWarning)
        return [
            KernelEvent(
                e.name, float(e.start_ns), float(e.duration_ns), line.name, stats=dict(e.stats)
            )
            for e in line.events
        ]


def _host_events(planes: list[Any]) -> list[KernelEvent]:
    """The host threads' events that XLA tagged with a module (a CPU's thunks)."""
    return [
        e
        for p in planes
        if p.name.startswith("/host:CPU")
        for line in p.lines
        for e in _events(line)
        if "hlo_module" in e.stats
    ]


def _module_matches(value: Any, module: str) -> bool:
    return isinstance(value, str) and (value == module or value.startswith(module + "("))


def of_module(event: KernelEvent, module: str) -> bool:
    """Whether XLA tagged the event as work of `module`."""
    return _module_matches(event.stats.get("hlo_module"), module)


def top_level(events: list[KernelEvent]) -> list[KernelEvent]:
    """Drop events nested inside another event of the same line, so nothing is counted twice."""
    kept: list[KernelEvent] = []
    for event in sorted(events, key=lambda e: (e.start_ns, -e.duration_ns)):
        if kept and event.start_ns >= kept[-1].start_ns and event.end_ns <= kept[-1].end_ns:
            continue
        kept.append(event)
    return kept


def _chunk(events: list[KernelEvent], n_iters: int, what: str) -> list[list[KernelEvent]]:
    """Split launch-ordered events into n equal iterations, checking every iteration looks alike."""
    events = sorted(events, key=lambda e: e.start_ns)
    if any("run_id" in e.stats for e in events):
        groups: dict[Any, list[KernelEvent]] = defaultdict(list)
        for e in events:
            groups[e.stats.get("run_id")].append(e)
        chunks = sorted(groups.values(), key=lambda g: g[0].start_ns)
        if len(chunks) != n_iters:
            raise TraceError(f"trace has {len(chunks)} executions of {what}, expected {n_iters}")
        return chunks
    if len(events) % n_iters:
        raise TraceError(f"{len(events)} {what} events cannot be split into {n_iters} iterations")
    per = len(events) // n_iters
    chunks = [events[i * per : (i + 1) * per] for i in range(n_iters)]
    signature = sorted(e.name for e in chunks[0])
    if any(sorted(e.name for e in c) != signature for c in chunks[1:]):
        raise TraceError(f"iterations of {what} launched different kernels; cannot attribute them")
    return chunks


@dataclass
class Read:
    """One module's iterations, and XLA's other work beside them (GPU, CPU; not read on a TPU)."""

    platform: str
    iterations: list[IterationKernels]
    others: list[KernelEvent] = field(default_factory=list)


def read(profile: Any, module: str, n_iters: int, device: str = "first_device") -> Read:
    """One jitted module's iterations on the first device plane, or the highest median's (max_device)."""
    planes = list(profile.planes)
    tpu = sorted((p for p in planes if p.name.startswith("/device:TPU")), key=_plane_order)
    gpu = sorted((p for p in planes if p.name.startswith("/device:GPU")), key=_plane_order)
    if tpu or gpu:
        reader = _tpu_read if tpu else _gpu_read
        if device != "max_device":
            return reader((tpu or gpu)[0], module, n_iters)
        runs, errors = [], []
        for plane in tpu or gpu:  # the devices that ran the module; a bystander is passed over
            try:
                runs.append(reader(plane, module, n_iters))
            except TraceError as error:
                errors.append(error)
        if not runs:
            raise errors[0]
        return max(runs, key=lambda r: statistics.median_high(i.total_ns for i in r.iterations))
    host = _host_events(planes)
    mine = [e for e in host if of_module(e, module)]
    if not mine:
        raise TraceError(f"the trace has no device or host-thread events of module {module}")
    chunks = _chunk(top_level(mine), n_iters, module)
    others = [e for e in host if not of_module(e, module)]
    return Read("cpu", [IterationKernels(c) for c in chunks], others)


def per_device(profile: Any, module: str, n_iters: int) -> dict[str, list[float]]:
    """Each device's time per iteration of one module (GPU kernels, TPU executions, CPU host events by
    `device_ordinal`); a bystander without events is left out, one that does not split raises."""
    planes = list(profile.planes)
    out: dict[str, list[float]] = {}
    devices = [p for p in planes if p.name.startswith(("/device:TPU", "/device:GPU"))]
    for plane in sorted(devices, key=lambda p: p.name):
        name = plane.name.removeprefix("/device:")
        with contextlib.suppress(Bystander):  # a chip that ran the module must show every iteration
            if name.startswith("TPU"):
                found = _tpu_read(plane, module, n_iters)
            else:
                found = _gpu_read(plane, module, n_iters, f"{module} on {name}")
            out[name] = [i.total_ns * 1e-9 for i in found.iterations]
    if devices:
        if not out:
            raise TraceError(f"no device has events of module {module}")
        return out
    by_device: dict[Any, list[KernelEvent]] = defaultdict(list)
    for e in _host_events(planes):
        if of_module(e, module):
            by_device[e.stats.get("device_ordinal", 0)].append(e)
    if not by_device:
        raise TraceError(f"the trace has no host-thread events of module {module}")
    for ordinal, events in sorted(by_device.items()):
        chunks = _chunk(top_level(events), n_iters, f"{module} on CPU:{ordinal}")
        out[f"CPU:{ordinal}"] = [sum(e.duration_ns for e in c) * 1e-9 for c in chunks]
    return out


def _plane_order(plane: Any) -> tuple[int, str]:
    """Device planes by their device number (TPU:10 after TPU:9)."""
    number = plane.name.rpartition(":")[2]
    return (int(number) if number.isdigit() else 0, plane.name)


def _gpu_read(plane: Any, module: str, n_iters: int, what: str = "") -> Read:
    """The module's kernels in iterations, and the plane's other events."""
    mine: list[KernelEvent] = []
    others: list[KernelEvent] = []
    for line in plane.lines:
        if line.name not in ("XLA Modules", "XLA Ops"):
            for e in _events(line):
                (mine if of_module(e, module) else others).append(e)
    if not mine:
        raise Bystander(f"the GPU trace has no kernel events of module {module}")
    return Read("gpu", [IterationKernels(c) for c in _chunk(mine, n_iters, what or module)], others)


def _tpu_read(plane: Any, module: str, n_iters: int) -> Read:
    lines = {line.name: line for line in plane.lines}
    if "XLA Modules" not in lines:
        raise Bystander("the TPU trace has no 'XLA Modules' line")
    runs = sorted(
        (e for e in _events(lines["XLA Modules"]) if _module_matches(e.name, module)),
        key=lambda e: e.start_ns,
    )
    if len(runs) != n_iters:  # none: a bystander
        raise (TraceError if runs else Bystander)(
            f"the TPU trace has {len(runs)} executions of {module}, expected {n_iters}"
        )
    ops = top_level(_events(lines["XLA Ops"])) if "XLA Ops" in lines else []
    iterations = [
        IterationKernels(
            [o for o in ops if o.start_ns >= run.start_ns and o.end_ns <= run.end_ns],
            run.duration_ns,
            run.start_ns,
        )
        for run in runs
    ]
    return Read("tpu", iterations)
