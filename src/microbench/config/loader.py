"""Read a YAML file, recognise its dialect and validate it into a typed config."""

from __future__ import annotations

import hashlib
import json
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from microbench.config.dialects import detect_dialect
from microbench.config.yaml_reader import read_yaml
from microbench.errors import UserError, did_you_mean, key_path


@dataclass(frozen=True)
class LoadedConfig:
    path: str
    dialect: str  # "ironwood" | "torchao"
    model: BaseModel
    raw: dict[str, Any]
    warnings: tuple[str, ...] = ()  # keys of earlier dialect versions that were upgraded

    @property
    def config_id(self) -> str:
        """Hash of the config's content; a results file remembers which config wrote it."""
        blob = json.dumps(self.raw, sort_keys=True, default=str).encode()
        return hashlib.sha1(blob).hexdigest()[:12]


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model class that sits at a validation error's location."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = current.model_fields.get(str(part))
        if field is None:
            return None
        current = _first_model(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _first_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _first_model(arg)
        if found is not None:
            return found
    return None


def _clean_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop pydantic's union-branch markers (e.g. 'list[ModelParams]') from a location."""
    return tuple(p for p in loc if isinstance(p, int) or not any(c in str(p) for c in "[]"))


def _translate(error: ValidationError, model: type[BaseModel], path: str) -> UserError:
    # a misspelt key also shows up as a missing one; the misspelling is the useful report
    errors = sorted(error.errors(), key=lambda e: e["type"] != "extra_forbidden")
    first = errors[0]
    loc = _clean_loc(tuple(first["loc"]))
    where = key_path(*loc)
    if first["type"] == "extra_forbidden":
        parent = _model_at(model, loc[:-1])
        known = [*parent.model_fields, *getattr(parent, "EARLIER_KEYS", ())] if parent else []
        return UserError(
            f"unknown key '{loc[-1]}'",
            file=path,
            key=where,
            suggestion=did_you_mean(str(loc[-1]), known),
        )
    if first["type"] == "missing":
        return UserError("required key is missing", file=path, key=where)
    message = first["msg"]
    given = repr(first.get("input"))
    if len(given) <= 60:
        message += f" (got {given})"
    return UserError(message, file=path, key=where)


def parse_config(data: Any, path: str) -> LoadedConfig:
    """Validate already-parsed YAML data."""
    if not isinstance(data, dict):
        raise UserError(
            f"the top level must be a mapping, got {type(data).__name__}",
            file=path,
            key="(top level)",
        )
    try:
        dialect = detect_dialect(data)
    except UserError as error:
        raise error.with_file(path) from None
    try:
        upgraded, warnings = dialect.upgrade(data)
        model = dialect.schema.model_validate(upgraded)
    except UserError as error:
        raise error.with_file(path) from None
    except ValidationError as error:
        raise _translate(error, dialect.schema, path) from None
    return LoadedConfig(path, dialect.name, model, data, tuple(warnings))


def load_config(path: str | Path) -> LoadedConfig:
    """Read and validate a config file; every problem is a one-line UserError."""
    path = str(path)
    if not path:
        raise UserError("--config is empty; name a YAML file")
    loaded = parse_config(read_yaml(path), path)
    for warning in loaded.warnings:
        print(f"warning: {path}: {warning}", file=sys.stderr)
    return loaded
