"""The two YAML dialects as pydantic models (unknown keys are refused)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    create_model,
    field_validator,
)
from pydantic_core import PydanticCustomError

from microbench.config.settings import check_setting
from microbench.core.case import declared_settings
from microbench.errors import UserError
from microbench.limits import (
    MAX_CASES,
    MAX_ITERATIONS,
)

# counts are integers, never booleans (YAML `true` would otherwise be read as 1)
PositiveInt = Annotated[int, Strict(), Field(gt=0)]
NonNegativeInt = Annotated[int, Strict(), Field(ge=0)]
# bounded settings (core/limits): a count or duration past its ceiling is refused at load
Iterations = Annotated[int, Strict(), Field(gt=0, le=MAX_ITERATIONS)]
Warmup = Annotated[int, Strict(), Field(ge=0, le=MAX_ITERATIONS)]
CaseCap = Annotated[int, Strict(), Field(gt=0, le=MAX_CASES)]
Peak = Annotated[float, Field(gt=0, allow_inf_nan=False)]


RULE_ERROR = "run_setting"  # a run setting's rule refused the value: its message is the whole error


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _checked_by_its_rule(name: str) -> Any:
    """A run setting's YAML field: any value, checked by the same rule and with the same message as
    wherever else the setting is given (config/settings.py), so one mistake reads one way."""

    def check(value: Any) -> Any:
        if value is None:
            return None
        try:
            return check_setting(name, value, "")
        except UserError as error:
            found = {"message": error.message, "suggestion": error.suggestion}
            raise PydanticCustomError(RULE_ERROR, "{message}", found) from None

    return Annotated[Any, BeforeValidator(check)]


# Every run setting as an optional field (a config gives some, per config or per benchmark), generated
# from their one declaration
_RUN_SETTING_FIELDS: dict[str, Any] = {
    f.name: (_checked_by_its_rule(f.name), None) for f in declared_settings()
}
RunSettingFields: type[_Strict] = create_model(
    "RunSettingFields", __base__=_Strict, **_RUN_SETTING_FIELDS
)


class PeakOverrides(_Strict):
    """Hardware peaks the user knows better than the built-in table (per chip)."""

    bf16_tflops: Peak | None = None
    fp8_tflops: Peak | None = None
    int8_tflops: Peak | None = None
    fp32_tflops: Peak | None = None
    hbm_gbps: Peak | None = None


Granularity = Literal["tensorwise", "rowwise"]


class Benchmark(RunSettingFields):  # type: ignore[valid-type,misc]
    """One entry of the Ironwood dialect's ``benchmarks:`` list."""

    benchmark_name: str
    benchmark_params: list[dict[str, Any]] | None = None
    benchmark_sweep_params: list[dict[str, Any]] | None = None
    warmup_tries: Warmup | None = None  # the reference's spelling of warmup (it ignored it)
    topology: str | None = None  # injected into params that lack it (all-to-all's bandwidth model)
    backend: str | list[str] | None = None
    csv_path: str | None = None
    trace_dir: str | None = None
    xla_dump_dir: str | None = None
    xlml_metrics_dir: str | None = None  # metrics_report.jsonl, one {metrics, dimensions} per case
    implementation: str | list[str] | None = None
    description: str | None = None


class IronwoodConfig(RunSettingFields):  # type: ignore[valid-type,misc]
    benchmarks: list[Benchmark] = Field(min_length=1)
    peaks: PeakOverrides | None = None
    max_cases: CaseCap | None = None
    backend: str | list[str] | None = None
    implementation: str | list[str] | None = None  # each benchmark's, where it names none


class MatrixShapes(_Strict):
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


class Float8TrainingKeys(_Strict):
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
    num_runs: Iterations | None = None
    warmup: Warmup | None = None


class TorchaoConfig(TorchaoSharedKeys):
    EARLIER_KEYS: ClassVar[dict[str, str]] = {
        "quantizations": "quantization_config_recipe_names",
        "sparsity_config_recipe_name": "sparsity_config_recipe_names",
    }

    benchmark_mode: Literal["inference", "training"] = "inference"
    quantization_config_recipe_names: list[str] = Field(default_factory=lambda: ["baseline"])
    output_dir: str = "results/torchao"
    model_params: list[
        ModelParams
    ]  # the README example gives one mapping: accepted as a list of one
    peaks: PeakOverrides | None = None
    max_cases: CaseCap | None = None

    @field_validator("model_params", mode="before")
    @classmethod
    def _as_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value
