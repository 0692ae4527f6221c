"""Reading YAML with bounds, so a config is answered in well under a second however large it claims to
be: duplicate keys refused (PyYAML keeps the last); size, depth and expanded values (aliases can make
billions) capped; regular files only; top-level `x-` keys (anchors for merge keys) dropped."""

from __future__ import annotations

import os
import stat
from typing import Any

import yaml

from accelbench.errors import UserError

MAX_BYTES = 4 << 20  # a hand-written config is kilobytes; 4 MiB leaves room for generated ones
MAX_VALUES = 1_000_000  # scalars, lists and mappings after alias expansion
MAX_DEPTH = 64

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


MERGE_TAG = "tag:yaml.org,2002:merge"


class BoundedLoader(_Base):
    """The safe loader, refusing a key named twice (one beside a `<<:` merge overrides it, as YAML 1.1)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if isinstance(key, str) and key in seen:
                raise UserError(
                    f"duplicate key '{key}' (lines {seen[key]} and {line}); YAML would keep only "
                    f"the last",
                    key=f"line {line}",
                )
            if isinstance(key, str):
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


BoundedLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, BoundedLoader.construct_mapping
)


def _check_expansion(data: Any) -> None:
    count = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise UserError(
                f"the config expands to more than {MAX_VALUES:,} values (YAML aliases re-used "
                f"many times?)",
                key="(top level)",
            )
        if depth > MAX_DEPTH:
            raise UserError(f"the config nests deeper than {MAX_DEPTH} levels", key="(top level)")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


def read_yaml(path: str) -> Any:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UserError("config file not found", file=path) from None
    except OSError as error:
        raise UserError(
            f"cannot read config: {error.strerror or type(error).__name__}", file=path
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise UserError("not a regular file (a config is a YAML file)", file=path)
    if info.st_size > MAX_BYTES:
        raise UserError(
            f"the config is {info.st_size / 2**20:.1f} MiB; the limit is {MAX_BYTES >> 20} MiB",
            file=path,
        )
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except PermissionError as error:
        raise UserError(f"cannot read config: {error.strerror}", file=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(
            f"not UTF-8 text (byte {error.start}): a config is YAML", file=path
        ) from None
    try:
        data = yaml.load(text, Loader=BoundedLoader)  # noqa: S506  a safe loader with bounds
        _check_expansion(data)
    except UserError as error:
        raise error.with_file(path) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise UserError(f"YAML syntax error: {problem}", file=path, key=where) from None
    except RecursionError:
        raise UserError(
            f"the config nests deeper than {MAX_DEPTH} levels", file=path, key="(top level)"
        ) from None
    if data is None:  # every file read here is a mapping
        raise UserError("the file is empty (no YAML value in it)", file=path)
    if isinstance(data, dict):  # `x-` keys hold anchors for merge keys (docker compose's rule)
        data = {k: v for k, v in data.items() if not (isinstance(k, str) and k.startswith("x-"))}
    return data
