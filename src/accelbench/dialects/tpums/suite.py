"""A TPUMS suite file (`suite_name`, `description`, `configs:`) run as one job with one consolidated
report (docs/tpums.md): every config is planned before any runs (a bad one stops the suite in one
line), then each runs into `<output_dir>/<config name>/`; a config that measured nothing is said so."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelbench.benchmarks.base import TPUMS
from accelbench.config.loader import LoadedConfig, load_config
from accelbench.config.planner import plan
from accelbench.config.yaml_reader import read_yaml
from accelbench.core.case import Case
from accelbench.core.options import RunOptions
from accelbench.dialects.jax_bench.cli import upstream_options
from accelbench.dialects.tpums.cluster import distinct
from accelbench.dialects.tpums.collect import aggregated, collect_run, header, publish
from accelbench.errors import UserError, key_path, visible
from accelbench.names import portable_name
from accelbench.platform.interrupt import stopped_by_signal
from accelbench.results.display import escaped, html_safe, markdown_safe
from accelbench.results.reading import read_rows
from accelbench.results.writer import check_writable
from accelbench.run.planning import check_options, jax_device_count

KEYS = ("suite_name", "description", "configs")
REPORT = ("consolidated_report.md", "consolidated_report.html")
# names a suite's output keeps for itself, beside the configs' folders
RESERVED = ("aggregated_results", *REPORT)
MAX_FOLDER = 200
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
    data = read_yaml(path)
    where = lambda key: f"{path}: {key}"  # noqa: E731
    if not isinstance(data, dict):
        raise UserError("a suite file is a mapping of suite_name, description, configs", key=path)
    if unknown := [key for key in data if key not in KEYS]:
        raise UserError(f"not a suite key (suite keys: {', '.join(KEYS)})", key=where(unknown[0]))
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


def _folder(path: str) -> str:
    """Its path below configs/ (else its file name) less `.yaml`, each part a safe name."""
    parts = Path(path).with_suffix("").parts
    below = parts[parts.index("configs") + 1 :] if "configs" in parts[:-1] else parts[-1:]
    return "/".join(portable_name(p) for p in below)


@dataclass(frozen=True)
class Ran:
    config: str
    table: Any  # a pandas DataFrame, or None where nothing was measured
    said: str = ""  # why there is no table (the config's one-line error)


Planned = tuple[str, LoadedConfig, list[Case], Any]  # its folder, config, cases, options


def _plan(
    suite: Suite, path: str, output_dir: str, files: RunOptions, flags: dict[str, Any]
) -> list[Planned]:
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
        planned.append((folder, loaded, cases, options))
    return planned


def suite_configs(suite: Suite, path: str) -> list[tuple[str, str, str]]:
    """Each config: as the suite names it, where found, its results folder (a short hash of its path
    where two would meet, or meet a name kept for the suite). Every one found, none listed twice."""
    located = [_located(config, path, i) for i, config in enumerate(suite.configs)]
    real = [os.path.realpath(p) for p in located]
    for i, here in enumerate(real):
        if here in real[:i]:
            raise UserError(
                f"is listed twice (also configs[{real.index(here)}])",
                key=f"{path}: {key_path('configs', i)}",
            )
    folders = distinct([*RESERVED, *map(_folder, located)], [*RESERVED, *real], MAX_FOLDER)
    return list(zip(suite.configs, located, folders[len(RESERVED) :], strict=True))


def run_suite(path: str, output_dir: str, files: RunOptions, flags: dict[str, Any]) -> int:
    """Each config in turn; a config that cannot write is said in the report and the suite goes on;
    a Ctrl-C or SIGTERM stops the suite (the run printed the command that finishes it)."""
    from accelbench.run.session import run_and_tell  # looked up at each run (tests replace it)

    suite = read_suite(path)
    check_writable(output_dir, "--output_dir", folder=True)
    codes: list[int] = []
    ran: list[Ran] = []
    for folder, loaded, cases, options in _plan(suite, path, output_dir, files, flags):
        before = set(_summaries(folder))
        try:
            outcome = run_and_tell(loaded, cases, options)
        except UserError as error:
            print(visible(f"error: {error}"), file=sys.stderr)
            codes.append(error.exit_code)
            ran.append(Ran(loaded.path, None, str(error)))
            continue
        codes.append(outcome.code)
        if stopped_by_signal(outcome.code):
            return outcome.code
        summary = _this_runs_summary(folder, before, files.resume)
        ran.append(Ran(loaded.path, _table(summary, outcome.cases)))

    publish(output_dir, report_files(suite, ran), "--output_dir")
    paths = ", ".join(os.path.join(output_dir, name) for name in REPORT)
    print(visible(f"consolidated report: {paths}"), file=sys.stderr)
    return max(codes, default=0)


def _summaries(folder: str) -> list[Path]:
    return sorted(Path(folder).glob("summary*.csv")) if os.path.isdir(folder) else []


def _this_runs_summary(folder: str, before: set[Path], resumed: bool) -> Path | None:
    """The summary.csv this run wrote: a new one, or on --resume the latest, which it continued."""
    after = _summaries(folder)
    new = [p for p in after if p not in before] or (after if resumed else [])
    return max(new, key=lambda p: p.stat().st_mtime_ns, default=None)


def shown(frame: Any, fields: set[str]) -> Any:
    """The case's fields that vary between the summary's rows, then TPUMS's figures."""
    varying = [
        c for c in frame.columns
        if c in fields and c not in SHOWN and frame[c].astype(str).nunique() > 1
    ]  # fmt: skip
    return frame[[*varying, *(c for c in SHOWN if c in frame.columns)]]


def collect(path: str, output_dir: str, run_id: str | None = None) -> int:
    """`tpums suite collect PATH`: a run's report and per-category CSVs, written to `output_dir`."""
    check_writable(output_dir, "--output_dir", folder=True)
    publish(output_dir, consolidated(collect_run(path, run_id)), "--output_dir")
    print(visible(f"consolidated report: {os.path.join(output_dir, REPORT[0])}"), file=sys.stderr)
    return 0


def consolidated(found: Any) -> dict[str, str]:
    """A collected run's report (every config submitted or held, by its full path) and its CSVs."""
    fields = {p.name for entry in TPUMS.values() for p in entry.fields}
    named, s = found.submitted.get("configs", {}), found.submitted
    ran = {f: Ran(str(named.get(f, f)), shown(frame, fields)) for f, frame in found.tables.items()}
    ran.update({f: Ran(str(named.get(f, f)), None, why) for f, why in found.said.items()})
    title = Path(found.root).parent.name if found.run_id else Path(found.root).name
    suite = Suite(str(s.get("suite") or title), str(s.get("description") or ""), ())
    return {
        **report_files(suite, [ran[f] for f in sorted(ran)], header(found)),
        **aggregated(found),
    }


def _table(summary: Path | None, cases: tuple[Case, ...]) -> Any:
    """This run's summary.csv, else its rows (a config of another layout)."""
    import pandas as pd

    if summary is not None:
        return shown(
            pd.read_csv(summary), {k for c in cases if c.origin for k in c.origin.fields.names()}
        )

    ids = {c.id for c in cases}
    cells = [
        (r.identity.label, (r.median_s or 0.0) * 1e3, r.timing.timing_source, r.timing.check)
        for path in sorted({c.outputs.csv_path for c in cases}) if os.path.isfile(path)
        for r in read_rows(path) if r.identity.case_id in ids and r.ok
    ]  # fmt: skip
    columns = ["case", "p50_ms", "timing_source", "check"]
    return pd.DataFrame(cells, columns=columns) if cells else None


def report_files(suite: Suite, ran: list[Ran], header: Sequence[str] = ()) -> dict[str, str]:
    """consolidated_report.md and .html: the suite, its header, each config's table; all escaped."""
    lead = [markdown_safe(line) for line in (suite.description, *header) if line]
    lead = [line + "  " for line in lead]  # a line each (a Markdown hard break)
    md = [f"# {markdown_safe(suite.name)}", "", *lead, ""]
    html = [f"<h1>{html_safe(suite.name)}</h1>", f"<p>{html_safe(suite.description)}</p>"]
    html += [f"<p>{html_safe(line)}</p>" for line in header]
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
    return dict(zip(REPORT, ("\n".join(md) + "\n", "\n".join(html) + "\n"), strict=True))
