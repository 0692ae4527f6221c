"""The TPUMS dialect: the reference's third generation (`benchmark:` with `params`, `cases` or
`cases_from_csv`, `sweep`; stage A and stage B files), its names over jax-bench's (`names`), its
planner (`plan`, through the jax-bench dialect), its metric names and console matrices (`metrics`),
its command line (`cli`: `tpums`, with `suite`) and its listing (`listing`) (docs/tpums.md)."""

from __future__ import annotations

from typing import Any

from accelbench.benchmarks import TPUMS
from accelbench.benchmarks.flags import XPROF_DIR
from accelbench.config.dialects import Command, Dialect, Listing, register_dialect
from accelbench.dialects.tpums import listing, plan
from accelbench.dialects.tpums.layouts import STRICT_LAYOUT


def case_fields(case: Any) -> tuple[str, dict[str, Any]]:
    """A planned case's TPUMS name and fields (the outputs module knows them)."""
    from accelbench.dialects.tpums.outputs import given_fields

    return given_fields(case)


def suite_file(data: dict[str, Any]) -> str | None:
    if "suite_name" in data and "configs" in data:
        return "a TPUMS suite file (its configs run in turn): run it with `tpums suite run FILE`"
    return None


register_dialect(
    Dialect(
        "tpums",
        plan.TpumsConfig,
        plan.recognise,
        plan.plan,
        order=10,  # first: a stage-A file may have `hardware:` beside its `benchmark:`
        looks_like="'benchmark: {name: ...}' (TPUMS dialect)",
        flags=(XPROF_DIR, STRICT_LAYOUT),
        sinks=("accelbench.dialects.tpums.outputs",),
        command=Command(
            "tpums",
            "accelbench.dialects.tpums.cli",
            "the reference's TPUMS command line (platform, benchmark list/run/run-config, suite)",
        ),
        listing=Listing(
            "--tpums",
            "the TPUMS names instead: tier, the jax-bench name each runs as, fields, departures",
            listing.tpums_records,
            "TPUMS names, beside the common fields (warmup_tries, num_runs, ...)",
            listing.COLUMNS,
            listing.cells,
            "docs/tpums.md",
        ),
        explains=suite_file,
        registries=(TPUMS,),
        case_fields=case_fields,
    )
)
