"""The Ironwood dialect: the reference's first generation (`benchmarks: - benchmark_name:` blocks with
`benchmark_params` or `benchmark_sweep_params`, `csv_path`, `trace_dir`, `xlml_metrics_dir`), its
schema (`schema`), planner (`plan`), the XLML metrics output (`xlml`) and its one-off form: `run --run
OP --field value` names any op of the catalogue (docs/ironwood.md)."""

from __future__ import annotations

from typing import Any

from accelbench.catalogue import Param, all_specs, case_choice_params, run_setting_params
from accelbench.config.dialects import Dialect, OneOff, register_dialect
from accelbench.dialects.ironwood import plan, schema


def _one_off_fields(name: str) -> tuple[Param, ...] | None:
    spec = all_specs().get(name)
    return None if spec is None else (*spec.params, *case_choice_params(), *run_setting_params())


def _one_off_data(name: str, fields: dict[str, Any]) -> dict[str, Any]:
    """A block of one parameter entry: the backend is the block's, the rest the entry's."""
    block = {k: fields.pop(k) for k in ("backend",) if k in fields}
    return {"benchmarks": [{"benchmark_name": name, **block, "benchmark_params": [fields]}]}


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
        one_off=OneOff(_one_off_fields, _one_off_data),
    )
)
