"""GPU clocks, temperature, power and clock-event (throttle) reasons sampled along a case on a side
thread (nvidia-ml-py): what measure/throttle.py judges each timed sample by, and the series the
throttling benchmark charts. One sample is five NVML reads, about 0.1 ms of one host core's time every
PERIOD_S, none of the device's."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

PERIOD_S = 0.02
GPU_SAMPLE_FIELDS = ("seconds", "sm_clock_mhz", "memory_clock_mhz", "temperature_c", "power_w")


@dataclass(frozen=True)
class MonitorSummary:
    """What a row keeps of a case's GPU monitor (TimingInfo's columns of these names, and the
    series for its chart)."""

    sm_clock_first_mhz: float | None = None
    sm_clock_last_mhz: float | None = None
    sm_clock_min_mhz: float | None = None
    temperature_max_c: float | None = None
    power_max_w: float | None = None
    series: list[list[float]] = field(default_factory=list)


@dataclass
class Monitor:
    """A background sampler; `series` rows are GPU_SAMPLE_FIELDS (seconds since the start).
    Without nvidia-ml-py or an NVIDIA GPU it samples nothing and says so in `note`."""

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
            import pynvml

            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(self.device_index)
        except Exception as error:  # no library, no driver, no such GPU: nothing to sample
            self.note = f"no GPU monitor: {type(error).__name__}: {error}"[:200]
            return self
        self._thread = threading.Thread(target=self._run, args=(pynvml, handle), daemon=True)
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
                reason = int(reasons(handle))
                self.reasons.append(reason)
                self.series.append(sample)
            except Exception as error:
                self.note = f"GPU monitor stopped: {error}"[:200]
                return
            self._stop.wait(PERIOD_S)

    def wait_for(self, sm_clock_mhz: float, cap_s: float) -> float:
        """Wait until the SM clock is back at `sm_clock_mhz` (the next sample says so), at most
        `cap_s`; the seconds waited."""
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
