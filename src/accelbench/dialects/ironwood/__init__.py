"""The Ironwood dialect: the reference's first generation (`benchmarks: - benchmark_name:` blocks with
`benchmark_params` or `benchmark_sweep_params`, `csv_path`, `trace_dir`, `xlml_metrics_dir`), its
schema (`schema`), planner (`plan`), the XLML metrics output (`xlml`) and its one-off form: `run --run
OP --field value` names any op of the catalogue (docs/ironwood.md)."""

from __future__ import annotations

from accelbench.catalogue import Param, all_specs, case_choice_params, run_setting_params
from accelbench.config.dialects import Dialect, OneOff, register_dialect
from accelbench.dialects.ironwood import plan, schema


def _one_off_fields(name: str) -> tuple[Param, ...] | None:
    spec = all_specs().get(name)
    return None if spec is None else (*spec.params, *case_choice_params(), *run_setting_params())


register_dialect(
    Dialect(
        "ironwood",
        schema.IronwoodConfig,
        lambda data: "benchmarks" in data,
        plan.plan,
        order=30,  # after jax-bench, whose files have a `benchmarks:` list too
        looks_like="'benchmarks: - benchmark_name:' (Ironwood dialect)",
        flags=(plan.OUTPUT_PATH,),
        sinks=("accelbench.dialects.ironwood.xlml",),
        one_off=OneOff(_one_off_fields, plan.one_off),
    )
)
