"""The jax-bench (v2) dialect: the reference's second generation (`global:`, `hardware:`,
`benchmarks: - name:` with `sweep:`, `csv_shapes:` and `model:`), its sixteen benchmark names and
their fields (`benchmarks`), its planner (`plan`, `inputs`), its summary.csv / detailed.json
(`outputs`), its flags (`flags`), its command line (`cli`: `jax-bench`) and its listing (`listing`).
Everything here is registered below; nothing outside this folder names it (docs/jax_bench.md)."""

from __future__ import annotations

from typing import Any

from accelbench.benchmarks import OURS_AS_PARAMS, V2
from accelbench.benchmarks.flags import CONDITIONS, HW, XPROF_DIR
from accelbench.catalogue import Param
from accelbench.config.dialects import Command, Dialect, Listing, OneOff, register_dialect
from accelbench.dialects.jax_bench import listing, plan


def _one_off_fields(name: str) -> tuple[Param, ...] | None:
    bench = V2.get(name)
    return None if bench is None or bench.tpums_only else (*bench.all_fields, *OURS_AS_PARAMS)


def case_fields(case: Any) -> tuple[str, dict[str, Any]]:
    """A planned case's benchmark and fields (the outputs module knows them)."""
    from accelbench.dialects.jax_bench.outputs import given_fields

    return given_fields(case)


register_dialect(
    Dialect(
        "jax_bench",
        plan.JaxBenchConfig,
        plan.recognise,
        plan.plan,
        order=20,  # after TPUMS: its stage-A files have `hardware:` too
        looks_like="'global:' or 'benchmarks: - name:' (jax-bench dialect)",
        flags=(HW, XPROF_DIR, CONDITIONS),
        sinks=("accelbench.dialects.jax_bench.outputs",),
        command=Command(
            "jax-bench",
            "accelbench.dialects.jax_bench.cli",
            "the reference's jax-bench command line (--config FILE, or --run NAME --field value)",
        ),
        listing=Listing(
            "--jax-bench",
            "the jax-bench (v2) names instead: the op each runs, its fields, its departures",
            listing.benchmark_records,
            "jax-bench (v2) names, beside the common fields (warmup_tries, num_runs, ...)",
            listing.COLUMNS,
            listing.cells,
            "docs/jax_bench.md",
        ),
        one_off=OneOff(_one_off_fields, plan.one_off),
        registries=(V2,),
        case_fields=case_fields,
    )
)
