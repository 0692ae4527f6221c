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

from microbench.config.loader import LoadedConfig, load_config
from microbench.core.case import Case
from microbench.errors import UserError, key_path

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
    from microbench.config.yaml_reader import read_yaml

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
    """The config's folder in the suite's output: its path below configs/, made unique."""
    parts = Path(path).with_suffix("").parts
    name = "_".join(parts[parts.index("configs") + 1 :] if "configs" in parts else parts[-1:])
    stem, n = name, 1
    while stem in taken:
        n += 1
        stem = f"{name}_{n}"
    taken.add(stem)
    return stem


def run_suite(path: str, output_dir: str, xprof_dir: str | None) -> int:
    from microbench.config.planner import plan
    from microbench.dialects.jax_bench.cli import upstream_options
    from microbench.dialects.jax_bench.flags import XPROF_DIR
    from microbench.run.planning import jax_device_count
    from microbench.run.session import run_planned

    suite = read_suite(path)
    planned: list[tuple[str, LoadedConfig, list[Case], Any]] = []
    taken: set[str] = set()
    for i, config in enumerate(suite.configs):
        located = _located(config, path, i)
        folder = os.path.join(output_dir, _stem(located, taken))
        options = upstream_options(folder, "--output_dir", **{XPROF_DIR.dest: xprof_dir})
        loaded = load_config(located)
        try:
            cases = plan(loaded, options, jax_device_count)
        except UserError as error:
            raise loaded.located(error) from None
        planned.append((folder, loaded, cases, options))
    codes = [run_planned(loaded, cases, options) for _, loaded, cases, options in planned]
    paths = write_report(
        suite, [(folder, loaded.path) for folder, loaded, _, _ in planned], output_dir
    )
    print(f"consolidated report: {', '.join(paths)}", file=sys.stderr)
    return max(codes, default=0)


def _table(folder: str) -> Any:
    import pandas as pd

    summaries = sorted(Path(folder).glob("summary*.csv"))
    if not summaries:
        return None
    frame = pd.concat([pd.read_csv(p) for p in summaries], ignore_index=True)
    return frame[[c for c in SHOWN if c in frame.columns]]


def write_report(suite: Suite, runs: list[tuple[str, str]], output_dir: str) -> tuple[str, str]:
    """consolidated_report.md and .html: the suite, then each config's summary table."""
    from microbench.results.writer import write_atomically

    md = [f"# {suite.name}", "", suite.description, ""]
    html = [f"<h1>{_escape(suite.name)}</h1>", f"<p>{_escape(suite.description)}</p>"]
    for folder, config in runs:
        table = _table(folder)
        md += [f"## {config}", ""]
        html.append(f"<h2>{_escape(config)}</h2>")
        if table is None or table.empty:
            md += ["No case of this config measured anything (see its rows for why).", ""]
            html.append("<p>No case of this config measured anything.</p>")
            continue
        md += [table.to_markdown(index=False, floatfmt=".4g"), ""]
        html.append(table.to_html(index=False, float_format=lambda v: f"{v:.4g}", escape=True))
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


def _escape(text: str) -> str:
    import html

    return html.escape(text)
