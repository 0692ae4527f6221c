"""Time every block/warps configuration of the Triton activation kernel at 64x2048x4096 bf16 (CUDA).

Median of 3 rounds x 50 launches each, with CUDA events; prints GB/s (bytes read + written) per config.
"""

import statistics

import torch

from torch_backend.kernels import triton_kernels as tk

CONFIGS = ((1024, 4), (2048, 4), (2048, 8), (4096, 4), (4096, 8), (8192, 8), (8192, 16))


def time_config(x, y, op, block, warps, launches=50):
    n = x.numel()
    grid = (triton_cdiv(n, block),)
    for _ in range(5):
        tk._activation_kernel[grid](x, y, n, OP=tk.OP_CODES[op], BLOCK=block, num_warps=warps)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(launches):
        tk._activation_kernel[grid](x, y, n, OP=tk.OP_CODES[op], BLOCK=block, num_warps=warps)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / launches * 1e-3


def triton_cdiv(a, b):
    return (a + b - 1) // b


def main():
    x = torch.randn(64, 2048, 4096, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    nbytes = 2 * x.numel() * x.element_size()
    for op in ("gelu", "gelu_tanh", "silu"):
        for block, warps in CONFIGS:
            rounds = [time_config(x, y, op, block, warps) for _ in range(3)]
            med = statistics.median(rounds)
            print(
                f"{op:<10} BLOCK={block:<5} warps={warps:<3} {med * 1e3:.4f} ms  {nbytes / med / 1e9:7.0f} GB/s  "
                f"(rounds {', '.join(f'{r * 1e3:.4f}' for r in rounds)})"
            )


if __name__ == "__main__":
    main()
