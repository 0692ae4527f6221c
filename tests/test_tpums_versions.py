"""Every TPUMS file version in tests/data/tpums_versions (each as it stood at an upstream commit, in a
folder named by that commit, read from upstream's history) loads as its own commit's loader loaded it:
an older layout the newest loader refuses (fields flat in `benchmark:`, `xprof_timing` inside a case's
values) is read as that earlier loader read it, with one note per layout in upstream's newest words,
and `--strict-layout` makes each such file upstream's one-line error. Unknown keys stay errors."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_options

from accelbench.config.loader import load_config
from accelbench.config.planner import plan
from accelbench.dialects.tpums.layouts import STAGE_B, STRICT_LAYOUT
from accelbench.errors import UserError

CORPUS = ROOT / "tests" / "data" / "tpums_versions"
VERSIONS = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.yaml"))
NOTE = "read as TPUMS's earlier loader read it"


def _older_layouts(path: Path) -> set[str]:
    """The layouts of the file the newest loader refuses, read from the file itself."""
    bench = yaml.safe_load(path.read_text())["benchmark"]
    flat = {"flat"} if any(k not in STAGE_B for k in bench) else set()
    inside = [bench.get("params") or {}, bench.get("sweep") or {}, *(bench.get("cases") or [])]
    return flat | ({"xprof"} if any("xprof_timing" in d for d in inside) else set())


def _planned(version: str, strict: bool = False) -> tuple[int, str]:
    """(cases, what planning said), run from the version's own checkout (upstream reads a CSV path
    from its working directory)."""
    commit, _, rel = version.partition("/")
    options = run_options(**({STRICT_LAYOUT.dest: True} if strict else {}))
    said = io.StringIO()
    before = os.getcwd()
    os.chdir(CORPUS / commit)
    try:
        with contextlib.redirect_stderr(said):
            cases = plan(load_config(rel), options, lambda: 8)
    finally:
        os.chdir(before)
    return len(cases), said.getvalue()


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_loads_as_at_its_commit_with_a_note_per_older_layout(version):
    count, said = _planned(version)
    assert count > 0
    assert said.count(NOTE) == len(_older_layouts(CORPUS / version)), said


@pytest.mark.parametrize("version", VERSIONS)
def test_strict_layout_refuses_exactly_the_older_layouts_in_upstreams_words(version):
    older = _older_layouts(CORPUS / version)
    if not older:
        assert _planned(version, strict=True)[0] > 0
        return
    with pytest.raises(UserError) as refused:
        _planned(version, strict=True)
    words = "Unrecognized key(s) in 'benchmark' mapping" if "flat" in older else "reserved key(s)"
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_the_corpus_spans_both_layouts_and_the_xprof_move():
    layouts = [_older_layouts(CORPUS / v) for v in VERSIONS]
    assert len(VERSIONS) >= 40
    assert sum("flat" in s for s in layouts) >= 10 and sum("xprof" in s for s in layouts) >= 5
    assert sum(not s for s in layouts) >= 10  # the newest layout


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("benchmark: {name: gemm, m: 64, prams: {k: 8}}", "unknown key 'prams' for gemm"),
        ("benchmark: {name: gemm, params: {m: 64}, k: 8}", "Unrecognized key(s)"),  # both layouts
        ("benchmark: {name: gemm, params: {m: 64, xprof_timing: true, sweep: 1}}", "reserved"),
    ],
)
def test_an_unknown_key_or_a_mix_of_layouts_stays_an_error(write_yaml, text, key):
    with pytest.raises(UserError, match=key.replace("(", r"\(").replace(")", r"\)")):
        plan(load_config(write_yaml(text)), run_options(), lambda: 8)


def test_xprof_timing_in_the_first_case_is_the_files_as_its_earlier_loader_took_it(write_yaml):
    path = write_yaml("benchmark: {name: gemm, cases: [{m: 64, xprof_timing: true}, {m: 128}]}")
    cases = plan(load_config(path), run_options(), lambda: 8)
    assert [c.outputs.trace_dir is not None for c in cases] == [True, True]
