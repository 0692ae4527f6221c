"""Measured memory ceiling: device-to-device copy bandwidth (bytes read + written) with CUDA events."""

import json
import sys

import torch


def main(gib: float = 2.0, runs: int = 50) -> dict:
    n = int(gib * (1 << 30)) // 4
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(5):
        dst.copy_(src)
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    times.sort()
    median = times[len(times) // 2]
    result = {
        "device": torch.cuda.get_device_name(0),
        "bytes": 2 * n * 4,
        "median_s": median,
        "copy_gbps": 2 * n * 4 / median / 1e9,
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main(*(float(a) for a in sys.argv[1:]))
