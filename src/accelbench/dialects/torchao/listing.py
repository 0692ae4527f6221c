"""`microbench list --torchao`: every quantization recipe (its names, the torchao config it builds,
what it needs, what it measures) and torchao's perf-script names for them; the same table is
docs/torchao_recipes.md's, generated."""

from __future__ import annotations

from dataclasses import dataclass

from accelbench.ops.torchao import ALIASES, recipes


@dataclass(frozen=True)
class RecipeRecord:
    name: str
    torchao_config: str
    needs: str
    measures: str


def recipe_records() -> list[RecipeRecord]:
    """The recipes, then the aliases (each saying which recipe it runs as)."""
    out = [RecipeRecord(", ".join(r.names), r.config, r.needs, r.doc) for r in recipes().values()]
    return out + [
        RecipeRecord(a.name, f"runs as {a.runs_as}", "as that recipe", a.note or "torchao's name")
        for a in ALIASES.values()
    ]
