"""The README's generated references: the CSV columns and the run settings, from their declarations
(`python -m accelbench.results.column_docs --write README.md` rewrites both)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path

from accelbench.catalogue import all_specs
from accelbench.core.case import Rule, declared_settings
from accelbench.core.column import doc_of
from accelbench.results.columns import UNIT_SUFFIXES
from accelbench.results.records import (
    BODY_GROUPS,
    GROUP_ATTRIBUTES,
    HEAD_GROUPS,
    TAIL_GROUPS,
    TimeStats,
)

START, END = "<!-- columns: generated -->", "<!-- columns: end -->"
SETTINGS_START, SETTINGS_END = "<!-- settings: generated -->", "<!-- settings: end -->"

# each column block's name in the README: its attribute on the row
BLOCKS = {cls: name.replace("_", " ") for cls, name in GROUP_ATTRIBUTES.items()}
BLOCKS[TimeStats] = "statistics"


def _cell(cls: type) -> str:
    return ", ".join(
        f"`{f.name}` ({doc_of(f)})" if doc_of(f) else f"`{f.name}`" for f in fields(cls)
    )


def _extras() -> list[tuple[str, type]]:
    ops: dict[type, list[str]] = {}
    suite: dict[type, str] = {}
    for name, spec in sorted(all_specs().items()):
        if spec.row_extras is not None:
            ops.setdefault(spec.row_extras, []).append(name)
            suite[spec.row_extras] = spec.suite
    return [
        (f"{suite[cls]}: {', '.join(names) if len(names) <= 3 else f'{len(names)} ops'}", cls)
        for cls, names in sorted(ops.items(), key=lambda item: suite[item[0]])
    ]


def markdown() -> str:
    lines = [
        START,
        "Every numeric column's name ends in its unit (the op's parameters keep their config names):",
        "",
        "| suffix | unit |",
        "|---|---|",
        *(f"| `{suffix}` | {unit} |" for suffix, unit in UNIT_SUFFIXES.items()),
        "",
        "In this order (JSON lines carry the same plus `samples_s`, `wall_samples_s`, `kernels`):",
        "",
        "| block | columns |",
        "|---|---|",
        *(f"| {BLOCKS[g]} | {_cell(g)} |" for g in HEAD_GROUPS),
        "| parameters | the union of the run's op parameters (`m`, `k`, `n`, `dtype`, `layout`, ...) |",
        *(f"| {BLOCKS[g]} | {_cell(g)} |" for g in BODY_GROUPS),
        *(f"| {label} | {_cell(cls)} |" for label, cls in _extras()),
        *(f"| {BLOCKS[g]} | {_cell(g)} |" for g in TAIL_GROUPS),
        END,
    ]
    return "\n".join(lines)


def _allowed(rule: Rule) -> str:
    if rule.choices:
        return " \\| ".join(f"`{c}`" for c in rule.choices)
    ranges = {
        "count": f"integer {rule.low:g} to {rule.high:,.0f}",
        "seconds": f"seconds, above 0, up to {rule.high:g}",
        "duration": f"seconds, 0 to {rule.high:g}",
        "fraction": "a fraction between 0 and 1",
        "timer": "`auto` or a registered timer",
    }
    return ranges[rule.kind]


def settings_markdown() -> str:
    lines = [
        SETTINGS_START,
        "| setting | default | takes | what it does |",
        "|---|---|---|---|",
        *(
            f"| `{f.name}` | {'' if f.default is None else f'`{f.default}`'} | "
            f"{_allowed(f.metadata['rule'])} | {f.metadata['doc']} |"
            for f in declared_settings()
        ),
        SETTINGS_END,
    ]
    return "\n".join(lines)


def _replaced(text: str, start: str, end: str, section: str) -> str:
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return head + section + tail


def rewrite(readme: Path) -> bool:
    text = readme.read_text(encoding="utf-8")
    new = _replaced(text, START, END, markdown())
    new = _replaced(new, SETTINGS_START, SETTINGS_END, settings_markdown())
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="README", help="rewrite this file's generated section")
    args = parser.parse_args(argv)
    if args.write:
        print("updated" if rewrite(Path(args.write)) else "unchanged", args.write)
    else:
        print(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
