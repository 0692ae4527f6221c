"""The torchao runner's dialect: the deleted torchao microbenchmark runner's configs (`model_params`,
`quantization_config_recipe_names`, their earlier keys) and its outputs."""

from __future__ import annotations

from accelbench.config.dialects import Dialect, Lazy, Listing, RunAlias, register_dialect
from accelbench.core.flags import Flag

HERE = "accelbench.dialects.torchao"
TORCHAO_CSV: Flag[bool] = Flag(
    "--torchao-csv",
    "also write torchao rows as torchao's runner did: "
    "<output_dir>/<benchmark_mode>/results_<ddmmYYYY_HHMMSS>.csv",
    False,
    switch=True,
    commands=("run", "dashboard"),
)
# `microbench dashboard --output FILE` (the torchao dialect's shorthand) or `run --dashboard FILE`
DASHBOARD: Flag[str | None] = Flag(
    "--dashboard",
    "also write the PyTorch OSS benchmark dashboard's JSON records of the torchao cases here",
    None,
    metavar="FILE",
)

register_dialect(
    Dialect(
        "torchao",
        Lazy(f"{HERE}.schema:TorchaoConfig"),
        lambda data: any(
            k in data for k in ("model_params", "quantization_config_recipe_names", "quantizations")
        ),
        Lazy(f"{HERE}.plan:plan"),
        order=40,
        upgrade=Lazy(f"{HERE}.plan:upgrade_earlier_keys"),
        looks_like="'model_params' (torchao dialect)",
        sink_flags=(TORCHAO_CSV, DASHBOARD),
        sinks=(f"{HERE}.runner",),
        listing=Listing(
            "--torchao",
            "the torchao quantization recipes: names, torchao config, needs, what each measures",
            Lazy(f"{HERE}.listing:recipe_records"),
            "torchao recipes",
            ("recipe", "torchao config", "needs", "what it measures"),
            Lazy("dataclasses:astuple"),  # a record's fields are its cells
            doc_page="docs/torchao_recipes.md",
        ),
        aliases=(
            RunAlias(
                "dashboard",
                "run a torchao config and write the PyTorch OSS benchmark JSON",
                "microbench dashboard --config tests/seed_examples/tutorial_dashboard_config.yml "
                "--output records.json",
                DASHBOARD,
                "--output",
            ),
        ),
    )
)
