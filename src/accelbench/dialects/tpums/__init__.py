"""The TPUMS dialect, the reference's third generation (`benchmark:` with `params`, `cases` or
`cases_from_csv`, `sweep`; stage A and B files); its names are declared in benchmarks/tpums.py."""

from __future__ import annotations

from typing import Any

from accelbench.benchmarks.flags import STRICT_LAYOUT, XPROF_DIR
from accelbench.config.dialects import Command, Dialect, Lazy, Listing, register_dialect

HERE = "accelbench.dialects.tpums"


def suite_file(data: dict[str, Any]) -> str | None:
    if "suite_name" in data and "configs" in data:
        return "a TPUMS suite file (its configs run in turn): run it with `tpums suite run FILE`"
    return None


register_dialect(
    Dialect(
        "tpums",
        Lazy(f"{HERE}.plan:TpumsConfig"),
        lambda data: "benchmark" in data and "benchmarks" not in data,
        Lazy(f"{HERE}.plan:plan"),
        order=10,  # first: a stage-A file may have `hardware:` beside its `benchmark:`
        looks_like="'benchmark: {name: ...}' (TPUMS dialect)",
        flags=(XPROF_DIR, STRICT_LAYOUT),
        sinks=(f"{HERE}.outputs",),
        command=Command(
            "tpums",
            f"{HERE}.cli",
            "the reference's TPUMS command line (platform, benchmark list/run/run-config, suite)",
        ),
        listing=Listing(
            "--tpums",
            "the TPUMS names instead: tier, the jax-bench name each runs as, fields, departures",
            Lazy(f"{HERE}.listing:tpums_records"),
            "TPUMS names, beside the common fields (warmup_tries, num_runs, ...)",
            ("name", "tier", "jax-bench name", "fields (default)", "departs from upstream"),
            Lazy(f"{HERE}.listing:cells"),
            "docs/tpums.md",
        ),
        explains=suite_file,
        registries=Lazy("accelbench.benchmarks.base:registries"),
        case_fields=Lazy(f"{HERE}.outputs:given_fields"),
    )
)
