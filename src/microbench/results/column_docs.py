"""The README's CSV column reference, generated from the row classes so it cannot fall behind them.

`python -m microbench.results.column_docs --write` rewrites the README's section between its markers;
a test fails when the README and this output differ.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path

from microbench.catalogue import all_specs
from microbench.results.columns import UNIT_SUFFIXES
from microbench.results.records import BODY_GROUPS, HEAD_GROUPS, TAIL_GROUPS

START, END = "<!-- columns: generated -->", "<!-- columns: end -->"

# What a name alone does not say. Units are not repeated here: the suffix table gives them.
NOTES = {
    "case_id": "stable hash of op, backend, params, run settings",
    "status": "`ok`, `unsupported`, `wrong_result`, `error`, `oom`, `timeout`, `crashed`",
    "noisy": "IQR over median above 10%",
    "decile_drift_ratio": "median of the last tenth of the samples over the first tenth's",
    "decile_sample_count": "samples in each tenth",
    "throttled": "drift above 1.05; no verdict under 5 samples a tenth",
    "timer": "as asked for; `timing_source` says what ran",
    "cache": "`cold`: caches flushed before every iteration; `warm`: not",
    "cadence": "`blocked`: each iteration waits for its outputs; `sustained`: back to back",
    "thread_count": "host threads of the framework",
    "timing_source": "`xprof_gpu`, `xprof_tpu`, `cupti`, `cuda_graph`, `cuda_events`, `wall_clock`",
    "device_span_median_s": "first kernel start to last kernel end",
    "launch_median_s": "launch-inclusive: CUDA events or the host's clock",
    "wall_median_s": "host time per blocked iteration",
    "top_kernels": "the three largest kernels (ATen ops on a CPU), launches per iteration and share",
    "check": "`passed`, `flagged: <why>`, `off`, `skipped: <why>`",
    "sm_clock_first_mhz": "this and the next four: sampled along a `gemm_throttling` case by nvidia-ml-py",
    "model_flop": "the op's FLOP model for one call",
    "model_bytes": "the op's byte model: inputs read once, outputs written once",
    "roofline_bound_s": "the time the peaks allow for the modelled FLOPs and bytes",
    "roofline_attained_pct": "`roofline_bound_s` over the median",
    "paired_with": "the other backend's case id for the same op and inputs",
    "git_dirty": "uncommitted changes to tracked files when the run started",
    "packages": "jax, jaxlib, libtpu, jax CUDA plugin, torch, torchao, triton, numpy versions",
    "gpu_clocks_mhz_at_start": "each GPU's SM and memory clock as the run started",
    "env_flags": "`XLA_FLAGS`, `LIBTPU_INIT_ARGS`, `CUDA_VISIBLE_DEVICES` as set",
    "gib_per_s": "binary, beside the decimal `gb_per_s`",
    "algbw_gb_per_s": "nccl-tests' algorithm bandwidth: message bytes over time",
    "busbw_gb_per_s": "nccl-tests' bus bandwidth",
    "transferred_bytes": "the Ironwood reference's traffic model",
    "compiled_over_eager_speedup_ratio": "quantized eager time over quantized compiled time",
    "memory_reduction_pct": "modelled bytes the fused version saves",
}
BLOCKS = {
    "Identity": "identity",
    "TimeStats": "statistics",
    "Conditions": "conditions",
    "TimingInfo": "timing",
    "Derived": "derived",
    "Roofline": "roofline",
    "Pairing": "pairing",
    "Environment": "environment",
}


def _cell(cls: type) -> str:
    return ", ".join(
        f"`{f.name}` ({NOTES[f.name]})" if f.name in NOTES else f"`{f.name}`" for f in fields(cls)
    )


def _extras() -> list[tuple[str, type]]:
    """Each declared extras class once, labelled by the ops that report it."""
    ops: dict[type, list[str]] = {}
    suite: dict[type, str] = {}
    for name, spec in sorted(all_specs().items()):
        if spec.row_extras is not None:
            ops.setdefault(spec.row_extras, []).append(name)
            suite[spec.row_extras] = spec.suite
    return [
        (f"{suite[cls]}: {', '.join(names) if len(names) <= 3 else f'{len(names)} ops'}", cls)
        for cls, names in sorted(ops.items(), key=lambda item: suite[item[0]])
    ]


def markdown() -> str:
    """The section: the unit suffixes, then every column block in file order."""
    lines = [
        START,
        "Every numeric column's name ends in its unit (the op's parameters keep their config names):",
        "",
        "| suffix | unit |",
        "|---|---|",
        *(f"| `{suffix}` | {unit} |" for suffix, unit in UNIT_SUFFIXES.items()),
        "",
        "In this order (JSON lines carry the same plus `samples_s`, `wall_samples_s`, `kernels`):",
        "",
        "| block | columns |",
        "|---|---|",
        *(f"| {BLOCKS[g.__name__]} | {_cell(g)} |" for g in HEAD_GROUPS),
        "| parameters | the union of the run's op parameters (`m`, `k`, `n`, `dtype`, `layout`, ...) |",
        *(f"| {BLOCKS[g.__name__]} | {_cell(g)} |" for g in BODY_GROUPS),
        *(f"| {label} | {_cell(cls)} |" for label, cls in _extras()),
        *(f"| {BLOCKS[g.__name__]} | {_cell(g)} |" for g in TAIL_GROUPS),
        END,
    ]
    return "\n".join(lines)


def rewrite(readme: Path) -> bool:
    """Replace the README's generated section; True when it changed."""
    text = readme.read_text()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = head + markdown() + tail
    if new != text:
        readme.write_text(new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="README", help="rewrite this file's generated section")
    args = parser.parse_args(argv)
    if args.write:
        print("updated" if rewrite(Path(args.write)) else "unchanged", args.write)
    else:
        print(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
