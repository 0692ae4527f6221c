"""A fourth dialect is one folder: copied into a temporary folder and named under the
`accelbench.dialects` entry point group (as an installed distribution names it), the toy in
tests/data/toy_dialect is seen by `validate`, `run` (its flag included), `list`, its own command line
and its output, with no file of the project edited."""

import csv
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

TOY = ROOT / "tests" / "data"


@pytest.fixture
def toy(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(TOY / "toy_dialect", site / "toy_dialect")
    shutil.copytree(TOY / "toy_dialect-0.1.dist-info", site / "toy_dialect-0.1.dist-info")
    (tmp_path / "toy.yaml").write_text("toy: [{n: 8}, {n: 16}]\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }

    def microbench(*args):
        return subprocess.run(
            [sys.executable, "-m", "accelbench", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=300,
        )

    return tmp_path, microbench


@pytest.mark.slow
def test_a_dialect_in_its_own_folder_is_seen_everywhere(toy):
    folder, microbench = toy
    done = microbench("validate", "--config", "toy.yaml", "--json")
    assert done.returncode == 0, done.stderr
    assert [c["params"]["n"] for c in json.loads(done.stdout)] == [8, 16]

    done = microbench("list", "--toy", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)[0]["name"] == "toy_fault", done.stderr
    assert "--toy-scale" in microbench("run", "--help").stdout

    done = microbench("run", "--config", "toy.yaml", "--toy-scale", "3", "--no-progress", "-q")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(open(folder / "results" / "toy.csv")))
    assert [int(r["n"]) for r in rows] == [24, 48] and all(r["status"] == "ok" for r in rows)
    column = list(csv.DictReader(open(folder / "results" / "toy_out.csv")))
    assert [r["toy_scaled_n_count"] for r in column] == ["24", "48"]

    done = microbench("toy", "--config", "toy.yaml", "--toy-scale", "2", "--out", "own")
    assert done.returncode == 0, done.stderr
    own = list(csv.DictReader(open(folder / "own" / "toy_out.csv")))
    assert [r["toy_scaled_n_count"] for r in own] == ["16", "32"]

    done = microbench("run", "--run", "toy_fault", "--n", "4", "--no-progress", "-q")
    assert done.returncode == 0, done.stderr  # its one-off form

    # its flag is its own: refused, in one line, for another dialect's file
    (folder / "add.yaml").write_text(
        "benchmarks: [{benchmark_name: add, benchmark_params: [{m: 8, n: 8}]}]\n"
    )
    done = microbench("validate", "--config", "add.yaml")
    assert done.returncode == 0
    done = microbench("run", "--config", "add.yaml", "--toy-scale", "2")
    assert done.returncode == 2 and "--toy-scale applies to toy configs" in done.stderr


def test_each_dialects_doc_page_holds_its_generated_names_table():
    """docs/jax_bench.md and docs/tpums.md hold the registry's table `list --NAME` prints (run
    `python -m accelbench.run.dialect_docs --write` after changing a benchmark)."""
    from accelbench.run import dialect_docs

    documented = dialect_docs.documented()
    assert {d.name for d in documented} >= {"jax_bench", "tpums"}
    for dialect in documented:
        page = (ROOT / dialect.listing.doc_page).read_text(encoding="utf-8")
        assert dialect_docs.section(dialect) in page, dialect.listing.doc_page
