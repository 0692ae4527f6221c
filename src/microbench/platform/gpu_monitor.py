"""GPU clocks, temperature and power sampled along a case (nvidia-ml-py), for the throttling benchmark:
a GEMM that slows down over a run is explained, or not, by the SM clock next to it."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

PERIOD_S = 0.1
GPU_SAMPLE_FIELDS = ("seconds", "sm_clock_mhz", "memory_clock_mhz", "temperature_c", "power_w")


@dataclass
class Monitor:
    """A background sampler; `series` rows are GPU_SAMPLE_FIELDS (seconds since the start).
    Without nvidia-ml-py or an NVIDIA GPU it samples nothing and says so in `note`."""

    device_index: int = 0
    enabled: bool = True
    series: list[tuple[float, float, float, float, float]] = field(default_factory=list)
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
        while not self._stop.is_set():
            try:
                self.series.append(
                    (
                        time.perf_counter() - start,
                        float(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)),
                        float(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM)),
                        float(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)),
                        nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
                    )
                )
            except Exception as error:
                self.note = f"GPU monitor stopped: {error}"[:200]
                return
            self._stop.wait(PERIOD_S)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def summary(self) -> dict[str, float | None]:
        """First and last tenth's median SM clock, the lowest clock, the hottest and most power drawn."""
        if not self.series:
            return {}
        tenth = max(1, len(self.series) // 10)
        sm = sorted(s[1] for s in self.series[:tenth]), sorted(s[1] for s in self.series[-tenth:])
        return {
            "sm_clock_first_mhz": sm[0][len(sm[0]) // 2],
            "sm_clock_last_mhz": sm[1][len(sm[1]) // 2],
            "sm_clock_min_mhz": min(s[1] for s in self.series),
            "temperature_max_c": max(s[3] for s in self.series),
            "power_max_w": max(s[4] for s in self.series),
        }
