"""The jax-bench (v2) dialect, the reference's second generation (`global:`, `hardware:`, `benchmarks:
- name:`); its benchmarks are `accelbench.benchmarks`'. Nothing outside this folder names it."""

from __future__ import annotations

from accelbench.benchmarks.flags import CONDITIONS, HW, XPROF_DIR
from accelbench.config.dialects import Command, Dialect, Lazy, Listing, OneOff, register_dialect

HERE = "accelbench.dialects.jax_bench"

register_dialect(
    Dialect(
        "jax_bench",
        Lazy(f"{HERE}.plan:JaxBenchConfig"),
        Lazy(f"{HERE}.plan:recognise"),
        Lazy(f"{HERE}.plan:plan"),
        order=20,  # after TPUMS: its stage-A files have `hardware:` too
        looks_like="'global:' or 'benchmarks: - name:' (jax-bench dialect)",
        flags=(HW, XPROF_DIR, CONDITIONS),
        sinks=(f"{HERE}.outputs",),
        command=Command(
            "jax-bench",
            f"{HERE}.cli",
            "the reference's jax-bench command line (--config FILE, or --run NAME --field value)",
        ),
        listing=Listing(
            "--jax-bench",
            "the jax-bench (v2) names instead: the op each runs, its fields, its departures",
            Lazy(f"{HERE}.listing:benchmark_records"),
            "jax-bench (v2) names, beside the common fields (warmup_tries, num_runs, ...)",
            ("name", "runs op", "fields (default)", "departs from upstream"),
            Lazy(f"{HERE}.listing:cells"),
            "docs/jax_bench.md",
        ),
        one_off=OneOff(Lazy(f"{HERE}.plan:one_off_fields"), Lazy(f"{HERE}.plan:one_off")),
        registries=Lazy("accelbench.benchmarks.base:registries"),
        case_fields=Lazy(f"{HERE}.outputs:given_fields"),
    )
)
