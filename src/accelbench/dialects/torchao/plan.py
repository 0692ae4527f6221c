"""The torchao dialect's planner: model_params entries x generated shapes x the mode's variants
(inference: every (recipe, sparsity) pair; training: float8 at each scaling granularity)."""

from __future__ import annotations

import os
import sys
from typing import Any

from accelbench.catalogue import get_spec
from accelbench.config.cases import within_cap
from accelbench.config.expand import Axis, Expansion, Point, given, values_of
from accelbench.config.settings import PlanRequest
from accelbench.config.shapes import Shape, generate_shapes
from accelbench.core.case import Case, Outputs, RunSettings
from accelbench.dialects.torchao.schema import Float8TrainingKeys, ModelParams, TorchaoConfig
from accelbench.errors import UserError, did_you_mean, key_path, visible
from accelbench.ops.torchao import (
    MODEL_TYPES,
    SPARSITY_KINDS,
    alias_note,
    recipe_examples,
    recipe_of,
    sparsity_kind,
    sparsity_pairs,
)

FALSE_WORDS = ("false", "off", "none", "no", "")
TRAINING_KEYS = tuple(Float8TrainingKeys.model_fields)
# a model_params entry's keys that every case of it takes as they are
AS_GIVEN = tuple(
    "model_type high_precision_dtype device enable_profiler enable_memory_profiler".split()
)


SWITCHES = {"compile": "use_torch_compile"}  # an earlier key that was a switch when it held a bool


def _rename(mapping: dict[str, Any], renames: dict[str, str], where: str) -> list[str]:
    warnings = []
    for old, target in renames.items():
        if old not in mapping:
            continue
        value = mapping.pop(old)
        new = SWITCHES[old] if old in SWITCHES and isinstance(value, bool) else target
        if new in mapping and mapping[new] != value:
            raise UserError(
                f"'{old}' (an earlier spelling of '{new}') and '{new}' disagree; keep '{new}'",
                key=key_path(where, old),
            )
        mapping[new] = value
        warnings.append(f"'{key_path(where, old)}' is deprecated; use '{new}'")
    return warnings


def upgrade_earlier_keys(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The config with the runner's earlier keys renamed to the current ones, and one warning per key."""
    data = dict(data)
    warnings = _rename(data, TorchaoConfig.EARLIER_KEYS, "")
    entries = data.get("model_params")
    if isinstance(entries, (dict, list)):
        entries = [entries] if isinstance(entries, dict) else entries
        data["model_params"] = [dict(e) if isinstance(e, dict) else e for e in entries]
        for i, entry in enumerate(data["model_params"]):
            if isinstance(entry, dict):
                warnings += _rename(entry, ModelParams.EARLIER_KEYS, key_path("model_params", i))
    return data, warnings


def compile_mode(mp: ModelParams) -> str:
    """One compile setting from `use_torch_compile` + `torch_compile_mode` (or the mode alone)."""
    value = mp.torch_compile_mode
    if mp.use_torch_compile is False or (value is None and not mp.use_torch_compile):
        return "off"
    if value is None or value is True:  # switched on without a mode
        return "default"
    return "off" if value is False or str(value).lower() in FALSE_WORDS else str(value)


def _check_name(name: str, known: bool, examples: tuple[str, ...], what: str, key: str) -> None:
    """A name close to a known one is a typo and refused; a distant one is a user's new recipe or
    model (the torchao tutorial's placeholders) and yields `unsupported` rows at run time."""
    if not known and (suggestion := did_you_mean(name, examples)):
        raise UserError(f"unknown {what} '{name}'", key=key, suggestion=suggestion)


_NOTED: set[str] = set()


def _recipes(cfg: TorchaoConfig) -> list[str]:
    for i, name in enumerate(cfg.quantization_config_recipe_names):
        where = key_path("quantization_config_recipe_names", i)
        known = recipe_of(name)
        _check_name(name, known is not None, recipe_examples(), "quantization recipe", where)
        if known and (problem := known[0].problem(known[1])):
            raise UserError(f"recipe '{name}': {problem}", key=where)
        if (note := alias_note(name)) and name not in _NOTED:
            _NOTED.add(name)  # once a process: a config is planned more than once
            print(visible(f"note: {where}: {note}"), file=sys.stderr)
    return list(dict.fromkeys(["baseline", *cfg.quantization_config_recipe_names]))


def _sparsities(cfg: TorchaoConfig, mp: ModelParams, where: str) -> list[str]:
    names: list[str] = []
    for owner, key in (
        (cfg, "sparsity_config_recipe_names"),
        (mp, key_path(where, "sparsity_config_recipe_names")),
    ):
        for i, name in enumerate(owner.sparsity_config_recipe_names or []):
            if not name or str(name).lower() in FALSE_WORDS:
                continue
            if sparsity_kind(str(name)) is None:
                raise UserError(
                    f"unknown sparsity recipe '{name}' (known: semi-sparse or any name with 'semi' "
                    f"or '2:4', and block)",
                    key=key_path(key, i),
                    suggestion=did_you_mean(str(name), SPARSITY_KINDS),
                )
            names.append(str(name))
    return list(dict.fromkeys(names))


def _training_keys(cfg: TorchaoConfig, mp: ModelParams) -> dict[str, Any]:
    """The entry's training keys over the top level's."""
    return {
        key: getattr(mp, key) if getattr(mp, key) is not None else getattr(cfg, key)
        for key in TRAINING_KEYS
    }


def _inference_variants(cfg: TorchaoConfig, mp: ModelParams, where: str) -> list[dict[str, Any]]:
    for key, value in _training_keys(cfg, mp).items():
        if value is not None:
            raise UserError(
                f"'{key}' belongs to benchmark_mode: training (this config runs inference)",
                key=key_path(where, key) if getattr(mp, key) is not None else key,
            )
    pairs = sparsity_pairs(_recipes(cfg), _sparsities(cfg, mp, where))
    return [{"recipe": recipe, "sparsity": sparsity} for recipe, sparsity in pairs]


def _training_variants(cfg: TorchaoConfig, mp: ModelParams, where: str) -> list[dict[str, Any]]:
    if [r for r in cfg.quantization_config_recipe_names if r != "baseline"]:
        raise UserError(
            "benchmark_mode: training runs float8 training against the high-precision model; "
            "quantization recipes belong to inference",
            key="quantization_config_recipe_names",
        )
    if _sparsities(cfg, mp, where):
        raise UserError(
            "benchmark_mode: training has no sparsity recipes", key="sparsity_config_recipe_names"
        )
    keys = _training_keys(cfg, mp)
    granularities = keys["scaling_granularity"] or "tensorwise"
    scaling = {k: v or "dynamic" for k, v in keys.items() if k.startswith("scaling_type")}
    fast = keys["use_fast_accum"] is not False  # unset: on
    return [{"recipe": "baseline"}] + [
        {"recipe": "float8", "scaling_granularity": g, "use_fast_accum": fast, **scaling}
        for g in ([granularities] if isinstance(granularities, str) else granularities)
    ]


VARIANTS = {"inference": _inference_variants, "training": _training_variants}


def _shapes(mp: ModelParams, where: str) -> list[Shape]:
    known = mp.model_type in MODEL_TYPES
    _check_name(mp.model_type, known, MODEL_TYPES, "model_type", key_path(where, "model_type"))
    shapes: list[Shape] = []
    for j, shape_spec in enumerate(mp.matrix_shapes):
        try:
            shapes += generate_shapes(shape_spec.model_dump(exclude_none=True))
        except UserError as error:
            where_j = key_path(where, "matrix_shapes", j, "name")
            raise UserError(error.message, key=where_j, suggestion=error.suggestion) from None
    if not shapes:
        raise UserError("matrix_shapes generate no shapes", key=key_path(where, "matrix_shapes"))
    return shapes


def _run_settings(cfg: TorchaoConfig, mp: ModelParams, where: str) -> RunSettings:
    repeat_n = mp.repeat_n or cfg.repeat_n
    if repeat_n and mp.num_runs and repeat_n != mp.num_runs:
        raise UserError(
            "repeat_n and num_runs both set the timed iterations and disagree",
            key=key_path(where, "num_runs"),
        )
    runs = mp.num_runs or repeat_n or 50
    return RunSettings(num_runs=runs, warmup=3 if mp.warmup is None else mp.warmup)


def _output_dir(cfg: TorchaoConfig, request: PlanRequest) -> str:
    """The config's `output_dir`, else `torchao/` in the run's folder (the runner's default)."""
    if "output_dir" in cfg.model_fields_set:
        return cfg.output_dir
    return os.path.join(os.path.dirname(request.default_csv) or ".", "torchao")


def _sized(name: str, dims: list[int], max_dim: int | None, where: str) -> Point:
    """A generated shape as a case of the expansion, --max-dim clamped."""
    m, k, n = (min(d, max_dim) for d in dims) if max_dim else dims
    return given({"shape_name": name, "m": m, "k": k, "n": n}, where)


def plan(cfg: TorchaoConfig, request: PlanRequest) -> list[Case]:
    spec = get_spec(f"torchao_{cfg.benchmark_mode}")  # the op of each benchmark_mode
    csv_path = os.path.join(_output_dir(cfg, request), "results.csv")
    cases: list[Case] = []
    for i, mp in enumerate(cfg.model_params):
        where = key_path("model_params", i)
        shapes = _shapes(mp, where)
        variants = VARIANTS[cfg.benchmark_mode](cfg, mp, where)
        within_cap(len(cases) + len(shapes) * len(variants), request.max_cases, where)
        run = _run_settings(cfg, mp, where)
        fixed = {key: getattr(mp, key) for key in AS_GIVEN}
        fixed.update(compile_mode=compile_mode(mp), output_dir=_output_dir(cfg, request))
        # the shape generators' shapes are the cases, the variants an axis over them: shape-major,
        # so the baseline measured for a shape serves every variant of that shape
        sized = [_sized(name, dims, request.max_dim, where) for name, dims in shapes]
        for point in Expansion(tuple(sized), (Axis("variant", tuple(variants), where),)).points():
            values = {**fixed, **point.pop("variant").value, **values_of(point)}
            cases.append(
                Case(
                    op=spec.name,
                    backend="torch",
                    params=spec.resolve(values, where),
                    run=run,
                    outputs=Outputs(csv_path=csv_path),
                    benchmark=mp.name or f"model_params[{i}]",
                    config_id=request.config_id,
                )
            )
    return cases
