"""The elementwise guide's entry point: run_comprehensive_benchmark(...), and a command line.

python -m torch_backend.elementwise [--quick] [--device cuda] [--dtype bfloat16] [--output results.json]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from accelbench.catalogue import implementations as registered
from accelbench.results.writer import write_json_atomically
from torch_backend.devices import default_device
from torch_backend.entry import make_case, run_seed_cases

SEED_OPERATIONS = {
    "LayerNorm": ("layernorm",),
    "GELU": ("gelu", "gelu_tanh"),
    "Swish": ("silu",),
    "Loss": ("mse_loss", "cross_entropy"),
}
BATCH_SIZES = (16, 32, 64, 128)
SEQUENCE_LENGTHS = (256, 512, 1024, 2048)
# the seed's range and real hidden sizes
TENSOR_DIMENSIONS = (8, 16, 32, 64, 128, 256, 512, 768, 1024, 2048, 4096, 8192)


def run_comprehensive_benchmark(
    batch_sizes: Sequence[int] = BATCH_SIZES,
    sequence_lengths: Sequence[int] = SEQUENCE_LENGTHS,
    tensor_dimensions: Sequence[int] = TENSOR_DIMENSIONS,
    operations: Sequence[str] = tuple(SEED_OPERATIONS),
    implementations: Sequence[str] | None = None,
    output_file: str | None = "benchmark_results.json",
    dtype: str = "bfloat16",
    device: str | None = None,
    num_trials: int = 50,
    num_warmup: int = 5,
    quick: bool = False,
) -> list[dict[str, Any]]:
    """Every operation x implementation over the grid; unsupported combinations come back as such."""
    if quick:  # one point
        batch_sizes, sequence_lengths, tensor_dimensions = (32,), (512,), (768,)
    implementations = implementations or tuple(registered("elementwise", "torch"))
    ops = [op for name in operations for op in SEED_OPERATIONS.get(name, (name,))]
    where = {"dtype": dtype, "device": device or default_device().type}
    cases = [
        make_case(
            "elementwise",
            {"operation": op, "batch": b, "seq": s, "hidden": h, **where},
            num_trials,
            num_warmup,
            implementation=impl,
        )
        for b in batch_sizes
        for s in sequence_lengths
        for h in tensor_dimensions
        for op in ops
        for impl in implementations
    ]
    results = run_seed_cases(cases)
    if output_file:
        write_json_atomically(output_file, results)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="one 32x512x768 point instead of the full grid"
    )
    parser.add_argument("--device", default=None)
    parser.add_argument("--dtype", default="bfloat16", choices=("float32", "bfloat16", "float16"))
    parser.add_argument(
        "--output",
        default="benchmark_results.json",
        help="the JSON results (this folder's by default)",
    )
    args = parser.parse_args(argv)
    results = run_comprehensive_benchmark(
        quick=args.quick, device=args.device, dtype=args.dtype, output_file=args.output
    )
    for r in results:
        status = (
            f"{r['time_ms']:.4f} ms, {r['throughput_gbps']:.0f} GB/s"
            if r["status"] == "ok"
            else r["error"]
        )
        print(
            f"{r['operation']:<16} {r['implementation']:<14} {r['batch_size']}x{r['sequence_length']}x"
            f"{r['tensor_dimension']}: {status}"
        )
    print(f"results: {args.output}", file=sys.stderr)  # the seed's default file, in this folder
    return 0


if __name__ == "__main__":
    sys.exit(main())
