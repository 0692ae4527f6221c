"""A comparison as CI systems show it natively (`compare --format github|junit`): GitHub job-summary
Markdown (a verdict line, the regressions first, every case in a collapsed table, links to traces) and
JUnit XML (one test case per compared case, a regression a failure, an inconclusive case skipped)."""

from __future__ import annotations

import datetime as _dt
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from accelbench.errors import visible
from accelbench.results.console import format_seconds
from accelbench.results.display import markdown_safe

SUMMARY_ROWS = 200  # a job summary holds at most 1 MiB: the collapsed table stops here
LINKED = ("http://", "https://", "gs://")  # a trace a reader of the summary can open
Pair = Any  # compare's Pair (which imports this module): its key, a, b, ratio, interval, verdict()


def inconclusive(pairs: Sequence[Pair], threshold: float, reasons: Sequence[str]) -> list[Pair]:
    """The inconclusive cases whose reason names one of `reasons` (`all`: any), which
    `--fail-inconclusive` makes regressions."""
    said = [(p, p.verdict(threshold).value) for p in pairs] if reasons else []
    return [
        p
        for p, verdict in said
        if verdict.startswith("inconclusive") and any(r == "all" or r in verdict for r in reasons)
    ]


def _verdict_line(pairs: Sequence[Pair], failing: Sequence[Pair], threshold: float) -> str:
    said = Counter(p.verdict(threshold).value for p in failing)
    if not failing:
        return f"**No regression**: {len(pairs)} cases compared, none slower by more than {threshold:.0%}."
    what = ", ".join(f"{n} {verdict}" for verdict, n in said.items())
    return f"**Regression**: {what} of {len(pairs)} cases (threshold {threshold:.0%})."


def _trace(pair: Pair) -> str:
    paths = [r.timing.trace_path for r in (pair.b, pair.a) if r is not None and r.timing.trace_path]
    shown = [p for p in paths if p.startswith(LINKED)]
    return " ".join(f"[trace]({quote(visible(p), safe=':/#?=&')})" for p in shown[:1])


def _line(pair: Pair, threshold: float) -> str:
    interval = f"{pair.interval[0]:.3f} – {pair.interval[1]:.3f}" if pair.interval else ""
    cells = (
        markdown_safe(pair.key),
        format_seconds(pair.a.median_s),
        format_seconds(pair.b.median_s if pair.b else None),
        f"{pair.ratio:.3f}" if pair.ratio else "",
        interval,
        markdown_safe(pair.verdict(threshold).value),
        _trace(pair),
    )
    return "| " + " | ".join(cells) + " |"


def github(
    pairs: Sequence[Pair], failing: Sequence[Pair], threshold: float, labels: tuple[str, str]
) -> str:
    """Job-summary Markdown: the verdict, the regressions' table, then every case, collapsed."""
    head = (
        f"| case | {markdown_safe(labels[0])} | {markdown_safe(labels[1])} | ratio | 95% interval "
        "| verdict | trace |\n|---|---:|---:|---:|---:|---|---|\n"
    )
    failed = {id(p) for p in failing}
    ordered = [*failing, *(p for p in pairs if id(p) not in failed)]
    shown = ordered[:SUMMARY_ROWS]
    more = f"\nThe first {len(shown)} of {len(ordered)}; `compare --json` lists every case.\n"
    out = [f"### microbench compare\n\n{_verdict_line(pairs, failing, threshold)}\n"]
    if failing:
        out.append(head + "\n".join(_line(p, threshold) for p in failing) + "\n")
    out.append(
        f"<details><summary>All {len(pairs)} cases</summary>\n\n"
        + head
        + "\n".join(_line(p, threshold) for p in shown)
        + "\n"
        + (more if len(ordered) > len(shown) else "")
        + "\n</details>\n"
    )
    return "\n".join(out)


def junit(
    pairs: Sequence[Pair], failing: Sequence[Pair], threshold: float, labels: tuple[str, str]
) -> str:
    """JUnit XML: a test case per compared case; a regression fails, an inconclusive one is skipped."""
    suite = ET.Element(
        "testsuite",
        name="microbench compare",
        tests=str(len(pairs)),
        failures=str(len(failing)),
        errors="0",
        skipped="0",
        timestamp=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
    ET.SubElement(
        ET.SubElement(suite, "properties"),
        "property",
        name="sides",
        value=visible(" vs ".join(labels)),
    )
    skipped, failed = 0, {id(p) for p in failing}
    for pair in pairs:
        verdict = pair.verdict(threshold).value
        seconds = pair.b.median_s if pair.b and pair.b.median_s else 0.0
        case = ET.SubElement(
            suite, "testcase", classname="microbench", name=visible(pair.key), time=f"{seconds:.3f}"
        )
        ratio = f" (ratio {pair.ratio:.3f})" if pair.ratio else ""
        if id(pair) in failed:
            ET.SubElement(case, "failure", type=verdict, message=visible(verdict + ratio))
        elif verdict.startswith("inconclusive"):
            skipped += 1
            ET.SubElement(case, "skipped", message=visible(verdict))
    suite.set("skipped", str(skipped))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
    )


FORMATS: dict[str, Callable[[Sequence[Pair], Sequence[Pair], float, tuple[str, str]], str]] = {
    "github": github,
    "junit": junit,
}


def show(
    fmt: str,
    pairs: Sequence[Pair],
    failing: Sequence[Pair],
    threshold: float,
    labels: tuple[str, str],
) -> bool:
    """Print the comparison in a CI format; False where `fmt` is none of them."""
    if fmt in FORMATS:
        print(FORMATS[fmt](pairs, failing, threshold, labels), end="")
    return fmt in FORMATS
