"""The torchao dialect's planner: recipes x model_params entries x generated shapes."""

from __future__ import annotations

import os

from microbench.catalogue import get_spec
from microbench.config.cases import Case, Outputs, PlanRequest, RunSettings
from microbench.config.schema import ModelParams, TorchaoConfig
from microbench.config.shapes import generate_shapes
from microbench.errors import UserError, key_path
from microbench.ops.torchao import MODEL_TYPES, RECIPE_EXAMPLES, check_name, is_known_recipe

FALSE_WORDS = ("false", "off", "none", "no", "")


def compile_mode(mp: ModelParams) -> str:
    """One compile setting from the dialect's two spellings (`compile:` or `use_torch_compile`+mode)."""
    if mp.compile is not None:
        value = mp.compile
    elif mp.use_torch_compile:
        value = mp.torch_compile_mode if mp.torch_compile_mode is not None else "default"
    elif mp.use_torch_compile is None and mp.torch_compile_mode is not None:
        value = mp.torch_compile_mode
    else:
        return "off"
    if value is True:
        return "default"
    if value is False or str(value).lower() in FALSE_WORDS:
        return "off"
    return str(value)


def plan(cfg: TorchaoConfig, request: PlanRequest) -> list[Case]:
    cap = request.max_cases
    spec = get_spec("torchao_inference")
    recipes = list(dict.fromkeys(["baseline", *cfg.quantization_config_recipe_names]))
    for i, name in enumerate(cfg.quantization_config_recipe_names):
        try:
            check_name(name, is_known_recipe(name), RECIPE_EXAMPLES, "quantization recipe")
        except UserError as error:
            raise UserError(
                error.message,
                key=key_path("quantization_config_recipe_names", i),
                suggestion=error.suggestion,
            ) from None
    sparsities = [s for s in (cfg.sparsity_config_recipe_names or []) if s]
    if sparsities:
        raise UserError(
            "sparsity recipes are not supported by this harness yet",
            key="sparsity_config_recipe_names",
        )
    max_dim = request.max_dim
    csv_path = os.path.join(cfg.output_dir, "results.csv")
    cases: list[Case] = []
    for i, mp in enumerate(cfg.model_params):
        where = key_path("model_params", i)
        try:
            check_name(mp.model_type, mp.model_type in MODEL_TYPES, MODEL_TYPES, "model_type")
        except UserError as error:
            raise UserError(
                error.message, key=key_path(where, "model_type"), suggestion=error.suggestion
            ) from None
        shapes = []
        for j, shape_spec in enumerate(mp.matrix_shapes):
            try:
                shapes += generate_shapes(shape_spec.model_dump(exclude_none=True))
            except UserError as error:
                raise UserError(
                    error.message,
                    key=key_path(where, "matrix_shapes", j, "name"),
                    suggestion=error.suggestion,
                ) from None
        if not shapes:
            raise UserError(
                "matrix_shapes generate no shapes", key=key_path(where, "matrix_shapes")
            )
        if len(cases) + len(shapes) * len(recipes) > cap:
            raise UserError(
                f"the config expands to more than {cap} cases; raise the cap with --max-cases "
                f"or 'max_cases:' if this is intended",
                key=where,
            )
        run = RunSettings(num_runs=mp.num_runs or 50, warmup=3 if mp.warmup is None else mp.warmup)
        # shape-major, so the baseline measured for a shape serves every recipe of that shape
        for shape_name, (m, k, n) in shapes:
            for recipe in recipes:
                if max_dim:
                    m, k, n = (min(d, max_dim) for d in (m, k, n))
                given = {
                    "recipe": recipe,
                    "model_type": mp.model_type,
                    "shape_name": shape_name,
                    "m": m,
                    "k": k,
                    "n": n,
                    "high_precision_dtype": mp.high_precision_dtype,
                    "compile_mode": compile_mode(mp),
                    "device": mp.device,
                    "enable_profiler": mp.enable_profiler,
                    "enable_memory_profiler": mp.enable_memory_profiler,
                    "output_dir": cfg.output_dir,
                }
                params = spec.resolve(given, where)
                cases.append(
                    Case(
                        op=spec.name,
                        backend="torch",
                        params=params,
                        run=run,
                        outputs=Outputs(csv_path=csv_path),
                        benchmark=mp.name or f"model_params[{i}]",
                        config_id=request.config_id,
                    )
                )
    return cases
