"""The Ironwood dialect, the reference's first generation (`benchmarks: - benchmark_name:` blocks);
its one-off form `run --run OP --field value` names any op of the catalogue (docs/ironwood.md)."""

from __future__ import annotations

from accelbench.config.dialects import Dialect, Lazy, OneOff, register_dialect
from accelbench.core.flags import Flag

HERE = "accelbench.dialects.ironwood"
OUTPUT_PATH: Flag[str | None] = Flag(
    "--output_path",
    "as the Ironwood reference: traces and HLO dumps under <path>/<benchmark_name>/",
    None,
    aliases=("--output-path",),
)

register_dialect(
    Dialect(
        "ironwood",
        Lazy(f"{HERE}.schema:IronwoodConfig"),
        lambda data: "benchmarks" in data,
        Lazy(f"{HERE}.plan:plan"),
        order=30,  # after jax-bench, whose files have a `benchmarks:` list too
        looks_like="'benchmarks: - benchmark_name:' (Ironwood dialect)",
        flags=(OUTPUT_PATH,),
        sinks=(f"{HERE}.xlml",),
        one_off=OneOff(Lazy(f"{HERE}.plan:one_off_fields"), Lazy(f"{HERE}.plan:one_off")),
    )
)
