"""The torchao runner's YAML schema (its configs as the deleted runner read them, with its earlier
keys), a `model_params` list of shape generators and the recipes to run on them."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator

from accelbench.config.schema import (
    CaseCap,
    Closed,
    NonNegativeInt,
    PeakOverrides,
    PositiveInt,
    run_setting_check,
)

# TRAINING_GRANULARITIES as a type (a test keeps the two equal)
Granularity = Literal["tensorwise", "rowwise", "blockwise", "mxfp8", "mxfp8-emulated"]


class MatrixShapes(Closed):
    name: str
    shapes: list[list[PositiveInt]] | None = None
    min_power: NonNegativeInt | None = None
    max_power: NonNegativeInt | None = None
    tokens: PositiveInt | None = None

    @field_validator("shapes")
    @classmethod
    def _three_dims(cls, shapes: list[list[int]] | None) -> list[list[int]] | None:
        for shape in shapes or []:
            if len(shape) != 3:
                raise ValueError(f"each shape must be [m, k, n], got {shape}")
        return shapes


class Float8TrainingKeys(Closed):
    """benchmark_mode: training's keys (torchao.float8), at the top level or per model_params entry."""

    scaling_type_input: Literal["dynamic"] | None = None
    scaling_type_weight: Literal["dynamic"] | None = None
    scaling_type_grad_output: Literal["dynamic"] | None = None
    scaling_granularity: Granularity | list[Granularity] | None = None
    use_fast_accum: bool | None = None
    repeat_n: PositiveInt | None = None


class TorchaoSharedKeys(Float8TrainingKeys):
    """Keys allowed at the top level and per model_params entry (the entry adds to the top level)."""

    sparsity_config_recipe_names: list[str | None] | None = None

    @field_validator("sparsity_config_recipe_names", mode="before")
    @classmethod
    def _sparsity_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class ModelParams(TorchaoSharedKeys):
    # keys of torchao runner's earlier versions -> the current key (upgraded before validation);
    # `compile` was the switch when it held true/false (beside `compile_mode`) and the mode otherwise
    EARLIER_KEYS: ClassVar[dict[str, str]] = {
        "precision": "high_precision_dtype",
        "compile": "torch_compile_mode",
        "compile_mode": "torch_compile_mode",
        "sparsity_config_recipe_name": "sparsity_config_recipe_names",
        "profile": "enable_profiler",
        "enable_memory_profile": "enable_memory_profiler",
        "enable_memory_visualizer": "enable_memory_profiler",  # the visualisation comes with it
        "sparsity": "sparsity_config_recipe_names",
    }

    name: str | None = None
    matrix_shapes: list[MatrixShapes] = Field(min_length=1)
    high_precision_dtype: str = "torch.bfloat16"
    use_torch_compile: bool | None = None
    torch_compile_mode: str | bool | None = None
    device: str = "cuda"
    model_type: str = "linear"
    enable_profiler: bool = False
    enable_memory_profiler: bool = False
    # checked by the run settings' own rules
    num_runs: Annotated[Any, run_setting_check("num_runs")] = None
    warmup: Annotated[Any, run_setting_check("warmup")] = None


class TorchaoConfig(TorchaoSharedKeys):
    EARLIER_KEYS: ClassVar[dict[str, str]] = {
        "quantizations": "quantization_config_recipe_names",
        "sparsity_config_recipe_name": "sparsity_config_recipe_names",
    }

    benchmark_mode: Literal["inference", "training"] = "inference"
    quantization_config_recipe_names: list[str] = Field(default_factory=lambda: ["baseline"])
    output_dir: str = "results/torchao"
    # the README example gives one mapping: accepted as a list of one
    model_params: list[ModelParams]
    peaks: PeakOverrides | None = None
    max_cases: CaseCap | None = None

    @field_validator("model_params", mode="before")
    @classmethod
    def _as_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value
