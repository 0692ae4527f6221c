"""The torchao runner's dialect: the deleted torchao microbenchmark runner's configs (`model_params`,
`quantization_config_recipe_names`, their earlier keys), its schema (`schema`), planner (`plan`), and
its outputs (`runner`: the runner's CSV and the CI dashboard's records, `microbench dashboard`)."""

from __future__ import annotations

from accelbench.config.dialects import Dialect, Listing, RunAlias, register_dialect
from accelbench.dialects.torchao import listing, plan, schema
from accelbench.dialects.torchao.runner import DASHBOARD

register_dialect(
    Dialect(
        "torchao",
        schema.TorchaoConfig,
        lambda data: any(
            k in data for k in ("model_params", "quantization_config_recipe_names", "quantizations")
        ),
        plan.plan,
        order=40,
        upgrade=plan.upgrade_earlier_keys,
        looks_like="'model_params' (torchao dialect)",
        sinks=("accelbench.dialects.torchao.runner",),
        listing=Listing(
            "--torchao",
            "the torchao quantization recipes: names, torchao config, needs, what each measures",
            listing.recipe_records,
            "torchao recipes",
            listing.COLUMNS,
            listing.cells,
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
