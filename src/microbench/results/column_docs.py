"""The README's CSV column reference, generated from the row classes (each field's name and the note it
declares with `core.column.column`) so it cannot fall behind them.

`python -m microbench.results.column_docs --write` rewrites the README's section between its markers;
a test fails when the README and this output differ.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path

from microbench.catalogue import all_specs
from microbench.core.column import doc_of
from microbench.results.columns import UNIT_SUFFIXES
from microbench.results.records import BODY_GROUPS, HEAD_GROUPS, TAIL_GROUPS

START, END = "<!-- columns: generated -->", "<!-- columns: end -->"

BLOCKS = {
    "Identity": "identity",
    "TimeStats": "statistics",
    "Conditions": "conditions",
    "TimingInfo": "timing",
    "Derived": "derived",
    "Roofline": "roofline",
    "Pairing": "pairing",
    "Environment": "environment",
}


def _cell(cls: type) -> str:
    """Each column of a block, with the note its field declares (units are in the names)."""
    return ", ".join(
        f"`{f.name}` ({doc_of(f)})" if doc_of(f) else f"`{f.name}`" for f in fields(cls)
    )


def _extras() -> list[tuple[str, type]]:
    """Each declared extras class once, labelled by the ops that report it."""
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
    """The section: the unit suffixes, then every column block in file order."""
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
        *(f"| {BLOCKS[g.__name__]} | {_cell(g)} |" for g in HEAD_GROUPS),
        "| parameters | the union of the run's op parameters (`m`, `k`, `n`, `dtype`, `layout`, ...) |",
        *(f"| {BLOCKS[g.__name__]} | {_cell(g)} |" for g in BODY_GROUPS),
        *(f"| {label} | {_cell(cls)} |" for label, cls in _extras()),
        *(f"| {BLOCKS[g.__name__]} | {_cell(g)} |" for g in TAIL_GROUPS),
        END,
    ]
    return "\n".join(lines)


def rewrite(readme: Path) -> bool:
    """Replace the README's generated section; True when it changed."""
    text = readme.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = head + markdown() + tail
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
