"""Read a YAML file, recognise its dialect and validate it into a typed config."""

from __future__ import annotations

import sys
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from accelbench.catalogue import Param
from accelbench.config.dialects import detect_dialect, dialects, resolved
from accelbench.config.expand import Given, Point
from accelbench.config.schema import RULE_ERROR
from accelbench.config.settings import PlanRequest
from accelbench.config.yaml_reader import read_yaml
from accelbench.core.case import Case, content_id
from accelbench.errors import UserError, did_you_mean, key_path, visible


@dataclass(frozen=True)
class LoadedConfig:
    path: str  # the file, or a command line's benchmark name
    dialect: str  # a registered dialect's name (config/dialects.py)
    model: BaseModel | None
    raw: dict[str, Any]
    warnings: tuple[str, ...] = ()  # keys of earlier dialect versions that were upgraded
    # a command line's cases (`run --run NAME --field value`, `tpums benchmark run`), made from its
    # typed values by the dialect, each error keyed by the option that gave the value
    one_off: Callable[[PlanRequest], list[Case]] | None = None

    @property
    def command_line(self) -> bool:
        return self.one_off is not None

    def located(self, error: UserError) -> UserError:  # a command line's names its option
        return error if self.command_line else error.with_file(self.path)

    @property
    def config_id(self) -> str:
        """Hash of the config's content; a results file remembers which config wrote it."""
        return content_id(_string_keys(self.raw))


def _string_keys(value: Any) -> Any:
    """Every mapping key a string, so it sorts (YAML keys may mix 1024 and "1024")."""
    if isinstance(value, dict):
        return {str(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    return value


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part)) if current else None
        current = _first_model(field.annotation) if field else None
    return current


def _first_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for arg in typing.get_args(annotation) if (m := _first_model(arg))), None)


def _clean_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """A location without pydantic's union-branch markers (e.g. 'list[ModelParams]')."""
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
    if first["type"] == RULE_ERROR:
        found = first["ctx"]
        return UserError(found["message"], file=path, key=where, suggestion=found["suggestion"])
    message = first["msg"]
    given = repr(first.get("input"))
    if len(given) <= 60:
        message += f" (got {given})"
    return UserError(message, file=path, key=where)


def parse_config(data: Any, path: str) -> LoadedConfig:
    if not isinstance(data, dict):
        raise UserError(
            f"the top level must be a mapping, got {type(data).__name__}",
            file=path,
            key="(top level)",
        )
    try:
        dialect = detect_dialect(data)
        upgraded, warnings = dialect.upgrade(data)
        model = dialect.schema.model_validate(upgraded)
    except UserError as error:
        raise error.with_file(path) from None
    except ValidationError as error:
        raise _translate(error, resolved(dialect.schema), path) from None
    return LoadedConfig(path, dialect.name, model, data, tuple(warnings))


def load_config(path: str | Path) -> LoadedConfig:
    path = str(path)
    if not path:
        raise UserError("--config is empty; name a YAML file")
    loaded = parse_config(read_yaml(path), path)
    for warning in loaded.warnings:
        print(visible(f"warning: {path}: {warning}"), file=sys.stderr)
    return loaded


TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")
NUMBERS = {"dim": int, "elements": int, "mib": int, "int": int, "float": float}


def typed_value(param: Param | None, text: str, option: str) -> Any:
    """A command-line value typed by the parameter it sets (YAML's reading where none is known)."""
    kind = param.kind if param else None
    if kind in NUMBERS:
        try:
            if not text.isascii():  # as YAML reads a number: '١٠٢٤' is text there
                raise ValueError
            return NUMBERS[kind](text)
        except ValueError:
            raise UserError(f"must be a number, got {text!r}", key=option) from None
    if kind == "bool":
        if text.lower() not in (*TRUE_WORDS, *FALSE_WORDS):
            raise UserError(f"must be true or false, got {text!r}", key=option)
        return text.lower() in TRUE_WORDS
    if kind in ("str", "path", "choice", "dtype", "jnp_dtype"):
        return text
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def parse_fields(name: str, args: Sequence[str]) -> Point:
    """`--field value` and `--field=value` pairs, typed by `name`'s fields, each keyed by its option."""
    known = {p.name: p for p in one_off_params(name)}
    fields: Point = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("-") or arg in ("-", "--"):
            raise UserError(f"expected --field value, got {arg!r}", key="--run")
        key, eq, value = arg.lstrip("-").partition("=")
        option = f"--{key}"
        key = key.replace("-", "_") if key.replace("-", "_") in known else key
        bare = i + 1 >= len(args) or args[i + 1].startswith("--")
        if not eq and bare and key in known and known[key].kind == "bool":
            value = "true"  # a bare boolean flag is true, as upstream's parser reads it
        elif not eq:
            if i + 1 >= len(args):
                raise UserError("needs a value", key=option)
            value, i = args[i + 1], i + 1
        if known and key not in known:
            raise UserError(
                f"unknown field '{key}' for {name}", key=option, suggestion=did_you_mean(key, known)
            )
        if key in fields:
            raise UserError("given twice", key=option)
        fields[key] = Given(typed_value(known.get(key), value, option), option)
        i += 1
    return fields


def one_off_params(name: str) -> tuple[Param, ...]:
    """What `--run NAME` takes: the fields of the first dialect (in order) that knows NAME."""
    return _owner(name)[1]


def _owner(name: str) -> tuple[Any, tuple[Param, ...]]:
    for dialect in dialects():
        if dialect.one_off is not None and (found := dialect.one_off.fields(name)) is not None:
            return dialect, found
    known = [n for d in dialects() if d.one_off for n in _names(d)]
    raise UserError(
        f"unknown benchmark '{name}' (see `microbench list`)",
        key="--run",
        suggestion=did_you_mean(name, known),
    )


def _names(dialect: Any) -> list[str]:
    """The names a dialect's one-off form may be asked for: its listing's, else the ops'."""
    from accelbench.catalogue import all_specs

    if dialect.listing is not None:
        return [r.name for r in dialect.listing.records()]
    return list(all_specs())


def one_off_config(name: str, args: Sequence[str]) -> LoadedConfig:
    """`run --run NAME --field value ...`: planned by the first dialect that knows NAME."""
    owner, _ = _owner(name)
    point = parse_fields(name, args)
    backend = point.get("backend")
    if backend is not None and isinstance(backend.value, str) and "," in backend.value:
        names = [b.strip() for b in backend.value.split(",") if b.strip()]  # `--backend jax,torch`
        point["backend"] = Given(names, backend.where)
    plan = owner.one_off.plan
    return LoadedConfig(
        name, owner.name, None, {"run": [name, *args]}, one_off=lambda r: plan(name, point, r)
    )
