"""GPU clocks, temperature, power and clock-event (throttle) reasons sampled along a case on a side
thread (nvidia-ml-py; five reads, ~0.1 ms of a host core every PERIOD_S): what measure/throttle.py
judges samples by. Beside them, the device's settings as the case ran (`DeviceState`), only read."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field, fields
from typing import Any

PERIOD_S = 0.02
GPU_SAMPLE_FIELDS = ("seconds", "sm_clock_mhz", "memory_clock_mhz", "temperature_c", "power_w")
USER_CLOCKS = 0x2  # NVML's clock-event reason "applications clocks setting" (user-defined clocks)


def _state(doc: str, verdict: bool = False) -> Any:
    """A DeviceState column: its README note, and whether rows differing in it make a verdict name it."""
    return field(default=None, metadata={"doc": doc, "verdict": verdict})


@dataclass(slots=True)
class DeviceState:
    """A GPU's settings as its case ran (NVML; blank where it does not say, and on other devices: a
    TPU's p-states, power and throttling are its row's telemetry): a row group (results/records.py)."""

    clocks_set: str | None = _state(
        "`default` (boost clocks move with power and temperature), `application` (application "
        "clocks moved from their defaults) or `locked` (NVML's user-defined clocks reason: "
        "`nvidia-smi --lock-gpu-clocks`)",
        verdict=True,
    )
    sm_clock_set_mhz: float | None = _state("the application SM clock, where set", True)
    memory_clock_set_mhz: float | None = _state("the application memory clock, where set", True)
    sm_clock_default_mhz: float | None = _state("the board's default application SM clock")
    power_limit_w: float | None = _state("the enforced power limit", True)
    power_limit_default_w: float | None = _state("the board's default power limit")
    persistence_mode: bool | None = _state("the driver kept loaded between processes")
    mig_mode: bool | None = _state("the GPU split into MIG instances", True)
    ecc_mode: bool | None = _state("ECC on for device memory", True)
    pcie_link: str | None = _state("the PCIe generation and width the board and slot allow", True)
    nvlink: str | None = _state("active NVLink links and NVML's NVLink version number", True)

    def differences(self, other: DeviceState) -> list[str]:
        """The `verdict` columns the two differ in (a blank differs from nothing), as `name a vs b`."""
        out = []
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if f.metadata["verdict"] and None not in (mine, theirs) and mine != theirs:
                out.append(f"{f.name} {mine} vs {theirs}")
        return out


def cuda_visible() -> list[str] | None:
    """CUDA_VISIBLE_DEVICES's entries, in CUDA's order (None: unset, every GPU of the host)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return None if visible is None else [v.strip() for v in visible.split(",") if v.strip()]


def nvml() -> Any:
    """nvidia-ml-py, initialised (raises without the library or a driver)."""
    import pynvml

    pynvml.nvmlInit()
    return pynvml


def nvml_handle(nvml: Any, index: int) -> Any:
    """NVML's handle of CUDA's GPU `index`: NVML numbers every GPU of the host, CUDA those
    CUDA_VISIBLE_DEVICES leaves (numbers, or UUIDs or their prefixes), in its order."""
    visible = cuda_visible()
    if visible is None:
        return nvml.nvmlDeviceGetHandleByIndex(index)
    named = visible[index]
    if named.isdigit():
        return nvml.nvmlDeviceGetHandleByIndex(int(named))
    for i in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(i)
        uuid = nvml.nvmlDeviceGetUUID(handle)
        if (uuid.decode() if isinstance(uuid, bytes) else uuid).startswith(named):
            return handle
    raise LookupError(f"no GPU {named} (CUDA_VISIBLE_DEVICES)")


def read_state(index: int, reasons: int = 0) -> DeviceState:
    """The settings of GPU `index` now; `reasons`: clock-event reason bits seen along the case (a
    locked clock may say so only under load). A query a board lacks leaves only its column blank."""
    try:
        lib = nvml()
        handle = nvml_handle(lib, index)
    except Exception:  # no library, no driver, no such GPU: nothing to say
        return DeviceState()

    def ask(query: str, *args: Any) -> Any:
        try:
            return getattr(lib, query)(handle, *args)
        except Exception:
            return None

    kinds = (lib.NVML_CLOCK_SM, lib.NVML_CLOCK_MEM)
    app = [ask("nvmlDeviceGetApplicationsClock", k) for k in kinds]
    default = [ask("nvmlDeviceGetDefaultApplicationsClock", k) for k in kinds]
    reasons |= ask("nvmlDeviceGetCurrentClocksEventReasons") or 0  # older nvidia-ml-py: Throttle
    reasons |= ask("nvmlDeviceGetCurrentClocksThrottleReasons") or 0
    moved = None not in app + default and app != default
    links = range(getattr(lib, "NVML_NVLINK_MAX_LINKS", 18))
    active = [link for link in links if ask("nvmlDeviceGetNvLinkState", link) == 1]
    generation, width = (ask(f"nvmlDeviceGetMaxPcieLink{q}") for q in ("Generation", "Width"))
    limits = ("EnforcedPowerLimit", "PowerManagementDefaultLimit")  # NVML says milliwatts
    watts = [None if (mw := ask(f"nvmlDeviceGet{q}")) is None else mw / 1000.0 for q in limits]
    version = ask("nvmlDeviceGetNvLinkVersion", active[0]) if active else None
    mig, ecc = (ask(q) for q in ("nvmlDeviceGetMigMode", "nvmlDeviceGetEccMode"))  # (now, pending)
    return DeviceState(
        clocks_set="application" if moved else "locked" if reasons & USER_CLOCKS else "default",
        sm_clock_set_mhz=app[0] if moved else None,
        memory_clock_set_mhz=app[1] if moved else None,
        sm_clock_default_mhz=default[0],
        power_limit_w=watts[0],
        power_limit_default_w=watts[1],
        persistence_mode=_flag(ask("nvmlDeviceGetPersistenceMode")),
        mig_mode=_flag(mig[0] if mig else None),
        ecc_mode=_flag(ecc[0] if ecc else None),
        pcie_link=f"gen{generation} x{width}" if generation and width else None,
        nvlink=f"{len(active)} links, version {version}" if active else None,
    )


def unlocked_note(state: DeviceState) -> str:
    """Said once after a run whose GPU clocks were not locked: what it means and the commands (the
    harness never runs them)."""
    mhz = f"{state.sm_clock_default_mhz:g}" if state.sm_clock_default_mhz else "MHZ"
    return (
        "clocks: this run's GPU clocks were not locked (clocks_set: default): boost clocks follow "
        "power and temperature, so times can move between runs; with the right to change device "
        f"settings, `sudo nvidia-smi --lock-gpu-clocks={mhz},{mhz}` before the run (the board's "
        "default application clock) and `sudo nvidia-smi --reset-gpu-clocks` after"
    )


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


@dataclass(frozen=True)
class MonitorSummary:
    """What a row keeps of a case's GPU monitor (TimingInfo's columns, and its chart's series)."""

    sm_clock_first_mhz: float | None = None
    sm_clock_last_mhz: float | None = None
    sm_clock_min_mhz: float | None = None
    temperature_max_c: float | None = None
    power_max_w: float | None = None
    series: list[list[float]] = field(default_factory=list)


@dataclass
class Monitor:
    """A background sampler of GPU_SAMPLE_FIELDS rows (nothing without NVML, saying why in `note`)."""

    device_index: int = 0
    enabled: bool = True
    series: list[tuple[float, float, float, float, float]] = field(default_factory=list)
    reasons: list[int] = field(default_factory=list)  # each sample's clock-event reason bits
    started_at: float = 0.0  # the first sample's clock, in seconds since the epoch
    note: str = ""
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Monitor:
        if not self.enabled:
            return self
        try:
            lib = nvml()
            handle = nvml_handle(lib, self.device_index)
        except Exception as error:  # no library, no driver, no such GPU: nothing to sample
            self.note = f"no GPU monitor: {type(error).__name__}: {error}"[:200]
            return self
        self._thread = threading.Thread(target=self._run, args=(lib, handle), daemon=True)
        self._thread.start()
        return self

    def _run(self, nvml: Any, handle: Any) -> None:
        start = time.perf_counter()
        self.started_at = time.time()
        reasons: Any = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", lambda handle: 0
        )
        while not self._stop.is_set():
            try:
                sample = (
                    time.perf_counter() - start,
                    float(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)),
                    float(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM)),
                    float(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)),
                    nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
                )
                self.reasons.append(int(reasons(handle)))
                self.series.append(sample)
            except Exception as error:
                self.note = f"GPU monitor stopped: {error}"[:200]
                return
            self._stop.wait(PERIOD_S)

    def wait_for(self, sm_clock_mhz: float, cap_s: float) -> float:
        """Wait (at most `cap_s`) until a sample shows the SM clock back at `sm_clock_mhz`; seconds waited."""
        start = time.perf_counter()
        while self._thread is not None and time.perf_counter() - start < cap_s:
            seen = len(self.series)
            self._stop.wait(PERIOD_S)
            if len(self.series) > seen and self.series[-1][1] >= sm_clock_mhz:
                break
        return time.perf_counter() - start

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def summary(self) -> MonitorSummary:
        """First and last tenth's median SM clock, the lowest clock, the hottest and most power drawn."""
        if not self.series:
            return MonitorSummary()
        tenth = max(1, len(self.series) // 10)
        sm = sorted(s[1] for s in self.series[:tenth]), sorted(s[1] for s in self.series[-tenth:])
        return MonitorSummary(
            sm_clock_first_mhz=sm[0][len(sm[0]) // 2],
            sm_clock_last_mhz=sm[1][len(sm[1]) // 2],
            sm_clock_min_mhz=min(s[1] for s in self.series),
            temperature_max_c=max(s[3] for s in self.series),
            power_max_w=max(s[4] for s in self.series),
            series=[list(sample) for sample in self.series],
        )
