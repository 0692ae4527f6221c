"""The fusion seed's entry points: calibrate_{linear,conv,attention}_fusion_patterns(quick=...).

python -m torch_backend.fusion [--quick] [--device cuda] [--dtype bfloat16] [--family all] [--output f.json]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from accelbench.ops.fusion import ATTENTION_PATTERNS, CONV_PATTERNS, LINEAR_PATTERNS
from accelbench.results.writer import write_json_atomically
from torch_backend.entry import default_device, make_case, run_seed_cases

LINEAR_SIZES = {
    "quick": [(512, 1024, 1024)],
    "full": [(512, 1024, 1024), (2048, 4096, 4096), (4096, 4096, 4096)],
}
CONV_SIZES = {
    "quick": [(4, 128, 128, 28)],
    "full": [(4, 128, 128, 28), (32, 256, 256, 56), (8, 64, 64, 112)],
}
ATTENTION_SIZES = {
    "quick": [(4, 8, 256, 64)],
    "full": [(4, 8, 256, 64), (8, 16, 1024, 64), (8, 16, 2048, 128)],
}


def _calibrate(
    op: str,
    patterns: tuple[str, ...],
    shapes: list[dict[str, int]],
    quick: bool,
    device: str | None,
    dtype: str,
    num_trials: int | None,
    num_warmup: int,
) -> list[dict[str, Any]]:
    trials = num_trials or (20 if quick else 100)
    cases = [
        make_case(
            op,
            {"pattern": pattern, **shape, "dtype": dtype, "device": device or default_device()},
            trials,
            num_warmup,
        )
        for shape in shapes
        for pattern in patterns
    ]
    return run_seed_cases(cases)


def calibrate_linear_fusion_patterns(
    quick: bool = False,
    device: str | None = None,
    dtype: str = "float32",
    num_trials: int | None = None,
    num_warmup: int = 10,
) -> list[dict[str, Any]]:
    shapes = [dict(m=m, k=k, n=n) for m, k, n in LINEAR_SIZES["quick" if quick else "full"]]
    return _calibrate(
        "fusion_linear", LINEAR_PATTERNS, shapes, quick, device, dtype, num_trials, num_warmup
    )


def calibrate_conv_fusion_patterns(
    quick: bool = False,
    device: str | None = None,
    dtype: str = "float32",
    num_trials: int | None = None,
    num_warmup: int = 10,
) -> list[dict[str, Any]]:
    shapes = [
        dict(batch=b, in_channels=ci, out_channels=co, size=s)
        for b, ci, co, s in CONV_SIZES["quick" if quick else "full"]
    ]
    return _calibrate(
        "fusion_conv", CONV_PATTERNS, shapes, quick, device, dtype, num_trials, num_warmup
    )


def calibrate_attention_fusion_patterns(
    quick: bool = False,
    device: str | None = None,
    dtype: str = "float32",
    num_trials: int | None = None,
    num_warmup: int = 10,
) -> list[dict[str, Any]]:
    shapes = [
        dict(batch=b, heads=h, seq=s, head_dim=d)
        for b, h, s, d in ATTENTION_SIZES["quick" if quick else "full"]
    ]
    return _calibrate(
        "fusion_attention", ATTENTION_PATTERNS, shapes, quick, device, dtype, num_trials, num_warmup
    )


FAMILIES = {
    "linear": calibrate_linear_fusion_patterns,
    "conv": calibrate_conv_fusion_patterns,
    "attention": calibrate_attention_fusion_patterns,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one size per family, fewer trials")
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda when available)")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    parser.add_argument("--family", default="all", choices=("all", *FAMILIES))
    parser.add_argument("--output", default=None, help="write the result dicts as JSON")
    args = parser.parse_args(argv)
    results = []
    for name, fn in FAMILIES.items():
        if args.family in ("all", name):
            results += fn(quick=args.quick, device=args.device, dtype=args.dtype)
    for r in results:
        if r["status"] == "ok":
            print(
                f"{r['fusion_pattern']} {r['input_shape']}: {r['speedup_factor']:.2f}x speedup, "
                f"{100 * r['memory_reduction']:.1f}% fewer bytes, {r['extra_params']['fusion_verdict']}"
            )
        else:
            print(f"{r['fusion_pattern']} {r['input_shape']}: {r['status']}: {r['error']}")
    if args.output:
        write_json_atomically(args.output, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
