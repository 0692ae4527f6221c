"""A TPUMS suite file (`suite_name`, `description`, `configs:`) run as one job, with one consolidated
report: the overview the reference publishes nightly (docs/tpums.md).

Every config is planned before any runs (a bad one stops the suite in one line, nothing measured); then
each runs in turn into `<output_dir>/<config name>/` (its rows, summary.csv and detailed.json), and
`consolidated_report.md` and `consolidated_report.html` beside them hold each config's summary table.
A config that measured nothing is said so in the report, not left out.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelbench.config.loader import LoadedConfig, load_config
from accelbench.core.case import Case
from accelbench.errors import UserError, key_path, safe_stem, visible
from accelbench.run.command_line import RunFiles

KEYS = ("suite_name", "description", "configs")
# what a consolidated table shows of a summary.csv, where present: the case, then TPUMS's figures
SHOWN = (
    "m", "k", "n", "in_dtype", "num_elements", "op_type", "data_size_mib", "direction",
    "src_device_index", "dst_device_index", "mesh_shape", "sharding_strategy", "matrix_dim",
    "dtype", "wall_clock_p50_ms", "xprof_p50_ms", "wall_clock_tflops_per_device",
    "xprof_tflops_per_device", "xprof_tflops_per_chip", "wall_clock_bandwidth_per_device_gb_s",
    "xprof_bandwidth_per_device_gb_s", "xprof_bandwidth_per_chip_gb_s", "check",
)  # fmt: skip


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    configs: tuple[str, ...]


def read_suite(path: str) -> Suite:
    from accelbench.config.yaml_reader import read_yaml

    data = read_yaml(path)
    where = lambda key: f"{path}: {key}"  # noqa: E731
    if not isinstance(data, dict):
        raise UserError("a suite file is a mapping of suite_name, description, configs", key=path)
    for key in data:
        if key not in KEYS:
            raise UserError(f"not a suite key (suite keys: {', '.join(KEYS)})", key=where(key))
    name, configs = data.get("suite_name"), data.get("configs")
    if not isinstance(name, str) or not name:
        raise UserError("must name the suite", key=where("suite_name"))
    if not isinstance(configs, list) or not configs or not all(isinstance(c, str) for c in configs):
        raise UserError("must be a non-empty list of config paths", key=where("configs"))
    return Suite(name, str(data.get("description") or ""), tuple(configs))


def _located(config: str, suite_path: str, index: int) -> str:
    """A config path as upstream reads it (from the working directory), else beside the suite file."""
    for candidate in (config, os.path.join(os.path.dirname(suite_path), config)):
        if os.path.isfile(candidate):
            return candidate
    raise UserError("config file not found", key=f"{suite_path}: {key_path('configs', index)}")


def _stem(path: str, taken: set[str]) -> str:
    """The config's folder in the suite's output: its path below configs/, made unique, and a safe
    name whatever the file is called (`...yaml` does not climb out of --output_dir)."""
    parts = Path(path).with_suffix("").parts
    name = safe_stem(
        "_".join(parts[parts.index("configs") + 1 :] if "configs" in parts else parts[-1:])
    )
    stem, n = name, 1
    while stem in taken:
        n += 1
        stem = f"{name}_{n}"
    taken.add(stem)
    return stem


@dataclass(frozen=True)
class Planned:
    folder: str
    loaded: LoadedConfig
    cases: list[Case]
    options: Any


@dataclass(frozen=True)
class Ran:
    """One config of this suite run, as the report tells it."""

    config: str
    table: Any  # a pandas DataFrame, or None where nothing was measured
    said: str = ""  # why there is no table (the config's one-line error)


def _plan(
    suite: Suite, path: str, output_dir: str, files: RunFiles, flags: dict[str, Any]
) -> list[Planned]:
    """Every config planned before any runs: a bad one stops the suite in one line, nothing measured."""
    from accelbench.config.planner import plan
    from accelbench.dialects.jax_bench.cli import upstream_options
    from accelbench.run.planning import check_options, jax_device_count

    planned: list[Planned] = []
    for _, located, stem in suite_configs(suite, path):
        folder = os.path.join(output_dir, stem)
        options = upstream_options(folder, "--output_dir", files, **flags)
        check_options(options)
        loaded = load_config(located)
        try:
            cases = plan(loaded, options, jax_device_count)
        except UserError as error:
            raise loaded.located(error) from None
        planned.append(Planned(folder, loaded, cases, options))
    return planned


def suite_configs(suite: Suite, path: str) -> list[tuple[str, str, str]]:
    """Each config: its path as the suite names it, where it was found, and its folder's name (one
    per config, unique), every one found or a one-line error."""
    taken: set[str] = set()
    out = []
    for i, config in enumerate(suite.configs):
        located = _located(config, path, i)
        out.append((config, located, _stem(located, taken)))
    return out


def run_suite(path: str, output_dir: str, files: RunFiles, flags: dict[str, Any]) -> int:
    """Each config in turn; a config that cannot write is said in the report and the suite goes on;
    a Ctrl-C or SIGTERM stops the suite (the run printed the command that finishes it)."""
    from accelbench.platform.interrupt import stopped_by_signal
    from accelbench.run.session import run_and_tell

    suite = read_suite(path)
    codes: list[int] = []
    ran: list[Ran] = []
    for entry in _plan(suite, path, output_dir, files, flags):
        before = set(_summaries(entry.folder))
        try:
            outcome = run_and_tell(entry.loaded, entry.cases, entry.options)
        except UserError as error:
            print(visible(f"error: {error}"), file=sys.stderr)
            codes.append(error.exit_code)
            ran.append(Ran(entry.loaded.path, None, str(error)))
            continue
        codes.append(outcome.code)
        if stopped_by_signal(outcome.code):
            return outcome.code
        summary = _this_runs_summary(entry.folder, before, files.resume)
        ran.append(Ran(entry.loaded.path, _table(summary, outcome.cases)))
    paths = write_report(suite, ran, output_dir)
    print(visible(f"consolidated report: {', '.join(paths)}"), file=sys.stderr)
    return max(codes, default=0)


def _summaries(folder: str) -> list[Path]:
    return sorted(Path(folder).glob("summary*.csv")) if os.path.isdir(folder) else []


def _this_runs_summary(folder: str, before: set[Path], resumed: bool) -> Path | None:
    """The summary.csv this run wrote: a new one, or on --resume the latest, which it continued."""
    after = _summaries(folder)
    new = [p for p in after if p not in before] or (after if resumed else [])
    return max(new, key=lambda p: p.stat().st_mtime_ns, default=None)


def shown(frame: Any, fields: set[str]) -> Any:
    """A summary's columns the report shows: the case's fields that vary between its rows, then
    TPUMS's figures."""
    varying = [
        c for c in frame.columns
        if c in fields and c not in SHOWN and frame[c].astype(str).nunique() > 1
    ]  # fmt: skip
    return frame[[*varying, *(c for c in SHOWN if c in frame.columns)]]


def collect(path: str, output_dir: str) -> int:
    """`tpums suite collect PATH`: the consolidated report of a suite's results in a bucket (or a
    folder), each config's latest summary.csv, every TPUMS field that varies shown."""
    from accelbench.benchmarks.base import TPUMS
    from accelbench.dialects.tpums.cluster import collected

    fields = {p.name for entry in TPUMS.values() for p in entry.fields}
    tables = collected(path)
    suite = Suite(Path(path.rstrip("/")).name or path, f"collected from {path}", tuple(tables))
    ran = [Ran(folder, shown(frame, fields)) for folder, frame in tables.items()]
    os.makedirs(output_dir, exist_ok=True)
    paths = write_report(suite, ran, output_dir)
    print(visible(f"consolidated report: {', '.join(paths)}"), file=sys.stderr)
    return 0


def _table(summary: Path | None, cases: tuple[Case, ...]) -> Any:
    """What the report shows of one config: this run's summary.csv (the figures, and every field
    that varies between its rows), else this run's rows (a config of another layout)."""
    import pandas as pd

    if summary is not None:
        return shown(
            pd.read_csv(summary), {k for c in cases if c.origin for k in c.origin.fields.names()}
        )
    from accelbench.results.reading import read_rows

    ids = {c.id for c in cases}
    rows = [
        r for path in sorted({c.outputs.csv_path for c in cases}) if os.path.isfile(path)
        for r in read_rows(path) if r.identity.case_id in ids and r.ok
    ]  # fmt: skip
    if not rows:
        return None
    return pd.DataFrame(
        {
            "case": [r.identity.label for r in rows],
            "p50_ms": [(r.median_s or 0.0) * 1e3 for r in rows],
            "timing_source": [r.timing.timing_source for r in rows],
            "check": [r.timing.check for r in rows],
        }
    )


def write_report(suite: Suite, ran: list[Ran], output_dir: str) -> tuple[str, str]:
    """consolidated_report.md and .html: the suite, then each config's table of this run. Every text
    a file carries is escaped for where it goes (a Markdown cell, HTML)."""
    from accelbench.results.display import escaped, html_safe, markdown_safe
    from accelbench.results.writer import write_atomically

    md = [f"# {markdown_safe(suite.name)}", "", markdown_safe(suite.description), ""]
    html = [f"<h1>{html_safe(suite.name)}</h1>", f"<p>{html_safe(suite.description)}</p>"]
    for config in ran:
        md += [f"## {markdown_safe(config.config)}", ""]
        html.append(f"<h2>{html_safe(config.config)}</h2>")
        if config.table is None or config.table.empty:
            why = config.said or "No case of this config measured anything (see its rows for why)."
            md += [markdown_safe(why), ""]
            html.append(f"<p>{html_safe(why)}</p>")
            continue
        md += [escaped(config.table, markdown_safe).to_markdown(index=False, floatfmt=".4g"), ""]
        html.append(
            escaped(config.table, visible).to_html(
                index=False, float_format=lambda v: f"{v:.4g}", escape=True
            )
        )
    paths = (
        os.path.join(output_dir, "consolidated_report.md"),
        os.path.join(output_dir, "consolidated_report.html"),
    )
    for path, text in zip(paths, ("\n".join(md), "\n".join(html)), strict=True):
        write_atomically(path, _writer(text))
    return paths


def _writer(text: str) -> Any:
    def write(f: Any) -> None:
        f.write(text + "\n")

    return write
