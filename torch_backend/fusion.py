"""The fusion seed's entry points: calibrate_{linear,conv,attention}_fusion_patterns(quick=...).

python -m torch_backend.fusion [--quick] [--device cuda] [--dtype bfloat16] [--family all] [--output f.json]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from accelbench.catalogue import get_spec
from accelbench.results.writer import write_json_atomically
from torch_backend.devices import default_device
from torch_backend.entry import make_case, run_seed_cases

Calibrate = Callable[..., list[dict[str, Any]]]


def _family(op: str, fields: str, sizes: list[tuple[int, ...]]) -> Calibrate:
    """A family's entry point: every pattern at each size (`quick`: the first size, fewer trials)."""

    def calibrate(
        quick: bool = False,
        device: str | None = None,
        dtype: str = "float32",
        num_trials: int | None = None,
        num_warmup: int = 10,
    ) -> list[dict[str, Any]]:
        patterns = get_spec(op).typed.declared_param("pattern").choices
        trials = num_trials or (20 if quick else 100)
        where = {"dtype": dtype, "device": device or default_device().type}
        shapes = [
            dict(zip(fields.split(), size, strict=True)) for size in sizes[: 1 if quick else None]
        ]
        cases = [
            make_case(op, {"pattern": pattern, **shape, **where}, trials, num_warmup)
            for shape in shapes
            for pattern in patterns
        ]
        return run_seed_cases(cases)

    return calibrate


calibrate_linear_fusion_patterns = _family(
    "fusion_linear", "m k n", [(512, 1024, 1024), (2048, 4096, 4096), (4096, 4096, 4096)]
)
calibrate_conv_fusion_patterns = _family(
    "fusion_conv",
    "batch in_channels out_channels size",
    [(4, 128, 128, 28), (32, 256, 256, 56), (8, 64, 64, 112)],
)
calibrate_attention_fusion_patterns = _family(
    "fusion_attention",
    "batch heads seq head_dim",
    [(4, 8, 256, 64), (8, 16, 1024, 64), (8, 16, 2048, 128)],
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
