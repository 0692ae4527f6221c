"""Every file name made from text goes through `names.portable_name`: portable, never hidden or read as
a flag, bounded, and distinct for distinct texts; the run's record keeps the name the user gave."""

import json
import re
from pathlib import Path

import pytest

from accelbench.names import portable_name

HOSTILE = [
    "my 'cfg' \"x\" $HOME",
    "a\nb",
    "a\rb",
    "caf\udce9",  # a file name that is not UTF-8, as Python decodes it
    "résultat €",
    "resultat _",
    ".",
    "..",
    "",
    "-o",
    "--overwrite",
    ".hidden",
    "a/b",
    "../../etc/passwd",
    "a\\b",
    "CON",
    "nul.txt",
    "x" * 300,
    "x" * 299 + "y",
    "a-deadbeef",  # looks like a name this function made
    "q.2",  # looks like run 2 of the series q
    "q",
    "A",
    "a",
    "a b",
    "a_b",
    "a-b",
    "!!!",
    "???",
    "\x1b[2J",
    "\u202eevil",
    "日本語",
    "quickstart",
]


@pytest.mark.parametrize("limit", [100, 45])
def test_every_name_is_portable_bounded_and_distinct(limit):
    names = [portable_name(text, limit) for text in HOSTILE]
    for text, name in zip(HOSTILE, names, strict=True):
        assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", name), (text, name)
        assert len(name) <= limit and name not in (".", "..")
        assert not re.search(r"\.[0-9]+$", name)  # never read as run n of another series
        assert portable_name(text, limit) == name  # the same text, the same name
    assert len(set(names)) == len(HOSTILE)  # A/a, a b/a_b/a-b, long names sharing a prefix


def test_a_portable_name_is_kept_as_it_is():
    for text in ("quickstart", "gemm_fp8.v2", "a-b_c.d", "Run_2026-11-27"):
        assert portable_name(text) == text


def test_results_files_of_hostile_config_names_are_portable_and_keep_the_given_name(
    tmp_path, run_cli, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    body = "num_runs: 2\nwarmup: 0\nbenchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8}]\n"
    stems = ["-o", "..", "", "a\nb", "my 'cfg' \"x\" $HOME"]
    for stem in stems:
        (tmp_path / f"{stem}.yaml").write_text(body)
        code, _, err = run_cli("run", "--config", f"./{stem}.yaml", "-q", "--backend", "jax")
        assert code == 0, err
    made = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert len(made) == 3 * len(stems)  # csv, jsonl, record each: no two configs share a file
    for name in made:
        assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", name), name
    records = [json.loads(p.read_text()) for p in (tmp_path / "results").glob("*.run.json")]
    given = sorted(Path(f"{stem}.yaml").stem for stem in stems)  # `.yaml` is a stem of its own
    assert sorted(r["named_from"] for r in records) == given
    code, out, _ = run_cli("runs", "--config", "./my 'cfg' \"x\" $HOME.yaml")
    assert code == 0 and "my 'cfg' \"x\" $HOME.yaml" in out


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "-o", "a" * 300 + ".csv"),
        ("history", "--results-dir", "a" * 300),
        ("runs", "--results-dir", "a" * 300),
        ("compare", "1", "2", "--results-dir", "a" * 300),
    ],
)
def test_a_name_longer_than_the_system_takes_is_one_line(tmp_path, monkeypatch, run_cli, argv):
    """A file or folder name over NAME_MAX (255 bytes) was an OSError traceback (second trial)."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(*argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []
