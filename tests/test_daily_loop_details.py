"""Issue 45's small things, each through its command line or its real client."""

import json
import logging
import os
import subprocess
import sys
import tarfile

import pytest
from conftest import ROOT


def test_v_shows_the_frameworks_warnings_and_vv_all_they_log(capsys):
    from accelbench.platform import chatter

    for verbosity, shown in ((0, set()), (1, {"warned"}), (2, {"warned", "informed"})):
        chatter.route(verbosity)
        log = logging.getLogger("torch._inductor.registry")
        log.info("informed")
        log.warning("warned")
        err = capsys.readouterr().err
        assert {w for w in ("warned", "informed") if w in err} == shown, (verbosity, err)
    chatter.route(0)


def test_tpums_benchmark_run_help_without_a_name_says_how(capsys):
    from accelbench.dialects.tpums.cli import run

    assert run(["benchmark", "run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: tpums benchmark run NAME" in out and "gemm" in out


def test_a_one_off_runs_on_the_comma_separated_backends(tmp_path, run_cli):
    code, out, err = run_cli(
        "run",
        "--run",
        "add",
        "--m",
        "16",
        "--n",
        "16",
        "--backend",
        "jax,torch",
        "--implementation",
        "eager",
        "--num-runs",
        "2",
        "-o",
        str(tmp_path / "o.csv"),
        "-q",
    )
    assert code == 0, err
    import csv

    assert sorted(r["backend"] for r in csv.DictReader(open(tmp_path / "o.csv"))) == [
        "jax",
        "torch",
    ]


def test_a_backend_that_cannot_load_says_what_installs_it():
    from accelbench import registrations
    from accelbench.errors import CaseFailure
    from accelbench.platform.backends import BackendInfo, register_backend
    from accelbench.run.runner import get_backend

    with registrations.scoped():
        register_backend(
            BackendInfo(
                "ghost",
                9,
                "no_such_module:Ghost",
                "accelbench.ops",
                "no_such_module",
                install="pip install ghost",
            )
        )
        with pytest.raises(
            CaseFailure, match=r"cannot load: .*no_such_module.*\(install it: pip install ghost\)"
        ):
            get_backend("ghost")


@pytest.mark.slow  # compiles 24 cases: about 70 s of CPU, several minutes on a loaded host
def test_the_elementwise_seed_script_says_where_its_results_went(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch_backend.elementwise",
            "--quick",
            "--device",
            "cpu",
            "--output",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert f"results: {tmp_path / 'r.json'}" in done.stderr and json.loads(
        (tmp_path / "r.json").read_text()
    )


@pytest.mark.slow  # builds the sdist
def test_the_sdist_carries_the_configs_docs_ironwood_and_test_data(tmp_path):
    from setuptools import build_meta

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        name = build_meta.build_sdist(str(tmp_path))
    finally:
        os.chdir(here)
    with tarfile.open(tmp_path / name) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    for wanted in (
        "configs/quickstart.yaml",
        "docs/architecture.md",
        "Ironwood/README.md",
        "tests/data/shipped_plans.json",
        "scripts/test.sh",
        "requirements.txt",
    ):
        assert wanted in names, wanted
