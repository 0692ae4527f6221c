"""What every dialect's pydantic schema shares: closed mappings, bounded counts and peaks, and the run
settings checked by their declared rules."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, create_model
from pydantic_core import PydanticCustomError

from accelbench.config.settings import check_setting
from accelbench.core.case import declared_settings
from accelbench.errors import UserError
from accelbench.limits import MAX_CASES, MAX_ITERATIONS

# counts are integers, never booleans (YAML `true` would otherwise be read as 1)
PositiveInt = Annotated[int, Strict(), Field(gt=0)]
NonNegativeInt = Annotated[int, Strict(), Field(ge=0)]
# bounded settings (core/limits): a count or duration past its ceiling is refused at load
Warmup = Annotated[int, Strict(), Field(ge=0, le=MAX_ITERATIONS)]
CaseCap = Annotated[int, Strict(), Field(gt=0, le=MAX_CASES)]
Peak = Annotated[float, Field(gt=0, allow_inf_nan=False)]


RULE_ERROR = "run_setting"  # a run setting's rule refused the value: its message is the whole error


class Closed(BaseModel):
    """A mapping whose unknown keys are refused."""

    model_config = ConfigDict(extra="forbid")


def run_setting_check(name: str) -> Any:
    """A run setting's YAML check: the same rule and message as wherever else it is given."""

    def check(value: Any) -> Any:
        if value is None:
            return None
        try:
            return check_setting(name, value, "")
        except UserError as error:
            found = {"message": error.message, "suggestion": error.suggestion}
            raise PydanticCustomError(RULE_ERROR, "{message}", found) from None

    return BeforeValidator(check)


# every run setting an optional field (given per config or per benchmark), from its one declaration
_RUN_SETTING_FIELDS: dict[str, Any] = {
    f.name: (Annotated[Any, run_setting_check(f.name)], None) for f in declared_settings()
}
RunSettingFields: type[Closed] = create_model(
    "RunSettingFields", __base__=Closed, **_RUN_SETTING_FIELDS
)


class PeakOverrides(Closed):
    """Hardware peaks the user knows better than the built-in table (per chip)."""

    bf16_tflops: Peak | None = None
    fp8_tflops: Peak | None = None
    int8_tflops: Peak | None = None
    fp32_tflops: Peak | None = None
    hbm_gbps: Peak | None = None
