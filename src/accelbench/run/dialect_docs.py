"""Each dialect's names table in its doc page, generated from the registry (the same table
`microbench list --NAME` prints): between `<!-- NAME names: generated -->` and `<!-- NAME names: end
-->`. `python -m accelbench.run.dialect_docs --write` rewrites every page; a test keeps them current.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from accelbench.config.dialects import Dialect, Listing, dialects
from accelbench.results.display import markdown_safe

ROOT = Path(__file__).resolve().parents[3]


def markers(dialect: Dialect) -> tuple[str, str]:
    return f"<!-- {dialect.name} names: generated -->", f"<!-- {dialect.name} names: end -->"


def markdown(listing: Listing) -> str:
    head = "| " + " | ".join(listing.columns) + " |"
    rule = "|" + "|".join("---" for _ in listing.columns) + "|"
    body = ["| " + " | ".join(markdown_safe(cell) for cell in row) + " |" for row in listing.rows()]
    return "\n".join([head, rule, *body])


def section(dialect: Dialect) -> str:
    assert dialect.listing is not None
    start, end = markers(dialect)
    return f"{start}\n{markdown(dialect.listing)}\n{end}"


def documented() -> list[Dialect]:
    return [d for d in dialects() if d.listing is not None and d.listing.doc_page]


def current(dialect: Dialect, text: str) -> str:
    start, end = markers(dialect)
    if start in text and end in text:
        before, rest = text.split(start, 1)
        return before + section(dialect) + rest.split(end, 1)[1]
    return text.rstrip("\n") + "\n\n" + section(dialect) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite the pages' sections")
    args = parser.parse_args(argv)
    stale = []
    for dialect in documented():
        assert dialect.listing is not None
        page = ROOT / dialect.listing.doc_page
        text = page.read_text(encoding="utf-8")
        new = current(dialect, text)
        if new != text:
            stale.append(str(page))
            if args.write:
                page.write_text(new, encoding="utf-8")
    print(("updated " if args.write else "stale: ") + (", ".join(stale) or "none"))
    return 0 if args.write or not stale else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
