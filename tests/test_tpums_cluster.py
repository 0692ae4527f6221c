"""A suite on a cluster (issue 51): `tpums suite submit --dry-run` manifests checked against what the
JobSet and Job APIs require and against a golden file, submit's refusals, and `tpums suite collect` on a
local folder standing in for a bucket."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from accelbench.cli import main

ROOT = Path(__file__).resolve().parents[1]
SUITE = str(ROOT / "configs" / "tpums" / "canonical_suite.yaml")
DNS_1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def dry_run(capsys, *args: str) -> list[dict]:
    code = main(
        ["tpums", "suite", "submit", SUITE, "--bucket", "gs://bucket/nightly", *args, "--dry-run"]
    )
    out = capsys.readouterr().out
    assert code == 0
    return list(yaml.safe_load_all(out))


def test_every_manifest_has_what_the_jobset_and_job_apis_require(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    docs = dry_run(capsys)
    assert len(docs) == 5  # the suite's five configs, one JobSet each
    for doc in docs:
        assert doc["apiVersion"] == "jobset.x-k8s.io/v1alpha2" and doc["kind"] == "JobSet"
        name = doc["metadata"]["name"]
        assert DNS_1123.fullmatch(name) and len(name) <= 45
        labels = doc["metadata"]["labels"]
        assert labels["kueue.x-k8s.io/queue-name"] and labels["kueue.x-k8s.io/priority-class"]
        (job,) = doc["spec"]["replicatedJobs"]
        assert DNS_1123.fullmatch(job["name"]) and job["replicas"] == 1
        spec = job["template"]["spec"]
        assert spec["parallelism"] == spec["completions"] >= 1
        pod = spec["template"]["spec"]
        assert pod["restartPolicy"] in ("Never", "OnFailure")  # a Job's pods may not restart Always
        (container,) = pod["containers"]
        assert container["name"] and container["image"]
        assert "gs://bucket/nightly/canonical_7x_default/" in container["args"][0]  # durable


def test_a_multi_host_slice_has_its_hosts_and_placement_policy_as_the_golden_file(
    capsys, monkeypatch
):
    monkeypatch.chdir(ROOT)
    (doc,) = dry_run(capsys, "--topologies", "4x4x4")
    golden = yaml.safe_load((ROOT / "tests" / "data" / "jobset_4x4x4_all_reduce.yaml").read_text())
    assert doc == golden
    spec = doc["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert spec["parallelism"] == 16  # 64 chips, 4 a host
    selector = spec["template"]["spec"]["nodeSelector"]
    assert selector["cloud.google.com/placement-policy-name"] == "tpu7x-128-4x4x4-placement-policy"


def test_filters_select_configs_and_a_bucket_is_required(capsys, monkeypatch, run_cli):
    monkeypatch.chdir(ROOT)
    assert len(dry_run(capsys, "--filter", "gemm", "--filter", "hbm")) == 2
    code, _, err = run_cli("tpums", "suite", "submit", SUITE, "--dry-run")
    assert code == 2 and "--bucket" in err
    code, _, err = run_cli(
        "tpums", "suite", "submit", SUITE, "--bucket", "gs://b", "--filter", "nope"
    )
    assert code == 2 and "matches" in err


def test_submitting_without_kubectl_is_one_line(monkeypatch, run_cli):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PATH", "/nonexistent")
    code, _, err = run_cli(
        "tpums", "suite", "submit", SUITE, "--bucket", "gs://b", "--filter", "gemm"
    )
    assert code == 2 and "kubectl is not on PATH" in err


@pytest.mark.slow  # two tiny TPUMS runs
def test_collect_builds_the_report_from_a_buckets_folders(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    bucket = tmp_path / "bucket" / "nightly"
    for name, body in (
        ("gemm", "benchmark: {name: gemm, params: {m: 16, k: 16, n: 16, num_runs: 2}}\n"),
        (
            "hbm",
            "benchmark: {name: hbm, params: {num_runs: 2}, sweep: {num_elements: [1024, 2048]}}\n",
        ),
    ):
        Path(f"{name}.yaml").write_text(body)
        for _ in range(2):  # a rerun: the latest summary is the one collected
            code, _, err = run_cli(
                "tpums",
                "benchmark",
                "run-config",
                f"{name}.yaml",
                "--output_dir",
                str(bucket / name),
            )
            assert code == 0, err
    code, _, err = run_cli("tpums", "suite", "collect", str(bucket), "--output_dir", "report")
    assert code == 0, err
    report = Path("report/consolidated_report.md").read_text()
    assert report.startswith("# nightly") and "## gemm" in report and "## hbm" in report
    table = report.split("## hbm", 1)[1]
    assert (
        "num\\_elements" in table and len([x for x in table.splitlines() if x.startswith("|")]) == 4
    )
    code, _, err = run_cli("tpums", "suite", "collect", str(tmp_path / "empty"))
    assert code == 2 and "holds no summary.csv" in err


def test_each_cluster_option_reaches_the_manifest(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    given = {
        "namespace": "bench", "queue": "q1", "priority": "high", "image": "img:1",
        "accelerator": "tpu7x", "timeout_min": "45", "install": "pkg==1",
    }  # fmt: skip
    (doc,) = dry_run(
        capsys, "--filter", "gemm", *(x for k, v in given.items() for x in (f"--{k}", v))
    )
    pod = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    container = pod["spec"]["containers"][0]
    assert doc["metadata"]["namespace"] == "bench" and container["image"] == "img:1"
    assert doc["metadata"]["labels"] == {
        "kueue.x-k8s.io/queue-name": "q1",
        "kueue.x-k8s.io/priority-class": "high",
    }
    assert pod["metadata"]["labels"]["declared-duration-minutes"] == "45"
    assert "pip install -q pkg==1" in container["args"][0]
    assert pod["spec"]["nodeSelector"]["cloud.google.com/gke-tpu-accelerator"] == "tpu7x"
