"""A suite on a cluster (issues 51, 57, 58): `tpums suite submit` manifests validated against the JobSet
CRD's own OpenAPI schema (kubernetes-sigs/jobset v0.12.0, vendored) and JobSet's name rules, run ids
and names that never collide, a pod script no hostile name can inject into, one-line refusals, the
watch loop (states, deadline, cleanup) against a stub kubectl, and a whole submission run on this
machine: each pod's script executed as the container would run it, in a fresh virtual environment,
against a file:// bucket, with only kubectl a stub."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from accelbench.cli import main

ROOT = Path(__file__).resolve().parents[1]
SUITE = str(ROOT / "configs" / "tpums" / "canonical_suite.yaml")
DNS_1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
CRD = (
    ROOT / "tests" / "data" / "jobset.x-k8s.io_jobsets-v0.12.0.yaml.gz"
)  # config/components/crd/bases, tag v0.12.0


def _schema() -> dict:
    crd = yaml.safe_load(gzip.open(CRD))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    return version["schema"]["openAPIV3Schema"]


TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
}


def violations(value, schema: dict, where: str = "") -> list[str]:
    """What a structural OpenAPI v3 schema refuses in `value`, as the API server does with strict
    field validation (kubectl's default): unknown fields, wrong types, missing required fields,
    values outside enums, patterns, lengths and minimums. CEL rules (x-kubernetes-validations) are
    not evaluated."""
    if schema.get("x-kubernetes-int-or-string"):
        ok = isinstance(value, (int, str)) and not isinstance(value, bool)
        return [] if ok else [f"{where}: int or string expected"]
    kind = schema.get("type")
    if kind and (
        not isinstance(value, TYPES[kind]) or (kind != "boolean" and isinstance(value, bool))
    ):
        return [f"{where}: {kind} expected, got {type(value).__name__}"]
    out = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} not in {schema['enum']}")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{where}: does not match {schema['pattern']}")
        if len(value) > schema.get("maxLength", len(value)) or len(value) < schema.get(
            "minLength", 0
        ):
            out.append(f"{where}: length {len(value)}")
    if isinstance(value, (int, float)) and value < schema.get("minimum", value):
        out.append(f"{where}: below {schema['minimum']}")
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)):
            out.append(f"{where}: more than {schema['maxItems']} items")
        for i, item in enumerate(value):
            out += violations(item, schema.get("items", {}), f"{where}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out += [f"{where}.{k}: required" for k in schema.get("required", []) if k not in value]
        for k, v in value.items():
            if k in props:
                out += violations(v, props[k], f"{where}.{k}")
            elif isinstance(schema.get("additionalProperties"), dict):
                out += violations(v, schema["additionalProperties"], f"{where}.{k}")
            elif props and not schema.get("x-kubernetes-preserve-unknown-fields"):
                out.append(f"{where}.{k}: unknown field")
    return out


def jobset_checks(doc: dict) -> list[str]:
    """What the JobSet webhook and Kueue check beyond the schema: an RFC 1123 name whose longest pod
    name (`<name>-<job>-<last job>-<last pod>-abcde`) is a DNS-1035 label of at most 63 characters,
    Kueue's queue and priority labels, and every label a valid label value."""
    out, meta = [], doc["metadata"]
    name = meta["name"]
    if not DNS_1123.fullmatch(name) or len(name) > 63:
        out.append(f"name {name!r}")
    for job in doc["spec"]["replicatedJobs"]:
        spec = job["template"]["spec"]
        pod = f"{name}-{job['name']}-{job['replicas'] - 1}-{spec['completions'] - 1}-abcde"
        if not DNS_1035.fullmatch(pod) or len(pod) > 63:
            out.append(f"pod name {pod!r} ({len(pod)})")
        labels = {**meta["labels"], **spec["template"]["metadata"]["labels"]}
        out += [
            f"label {k}={v!r}"
            for k, v in labels.items()
            if not (LABEL_VALUE.fullmatch(v) and len(v) <= 63)
        ]
    if not {"kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class"} <= set(meta["labels"]):
        out.append("Kueue's labels")
    return out


def dry_run(
    capsys, *args: str, suite: str = SUITE, bucket: str = "gs://bucket/nightly"
) -> list[dict]:
    code = main(["tpums", "suite", "submit", suite, "--bucket", bucket, *args, "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return list(yaml.safe_load_all(out))


def env_of(doc: dict) -> dict[str, str]:
    (container,) = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"
    ]
    return {e["name"]: e["value"] for e in container["env"]}


def test_the_validator_refuses_what_the_api_server_refuses(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    (doc,) = dry_run(capsys, "--filter", "gemm")
    schema = _schema()
    assert violations(doc, schema) == []
    spec = doc["spec"]["replicatedJobs"][0]["template"]["spec"]
    spec["completion"] = 1  # a misspelt field
    spec["parallelism"] = "one"  # a string where an integer goes
    del doc["spec"]["replicatedJobs"][0]["name"]  # a required field
    said = violations(doc, schema)
    assert any("completion: unknown field" in s for s in said)
    assert any("parallelism: integer expected" in s for s in said)
    assert any("replicatedJobs[0].name: required" in s for s in said)


def test_every_manifest_passes_the_crd_schema_and_jobsets_name_rules(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    schema = _schema()
    every = ("--reservation", "res-1", "--placement-policy", "tpu7x-128-4x4x4", "--image", "img:1")
    for extra in ((), every):
        docs = dry_run(capsys, *extra)
        assert len(docs) == 5  # the canonical suite's five configs
        for doc in docs:
            assert violations(doc, schema) == [], doc["metadata"]["name"]
            assert jobset_checks(doc) == [], doc["metadata"]["name"]
    multi = next(d for d in docs if "4x4x4" in d["metadata"]["name"])
    assert multi["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 16  # 64 chips


def test_two_submissions_never_share_a_name_or_a_folder(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    first, second = dry_run(capsys), dry_run(capsys)
    names = [{d["metadata"]["name"] for d in docs} for docs in (first, second)]
    folders = [{env_of(d)["ACCELBENCH_RESULTS"] for d in docs} for docs in (first, second)]
    assert not names[0] & names[1] and not folders[0] & folders[1]
    run_ids = {d["metadata"]["labels"]["accelbench/run-id"] for d in first + second}
    assert len(run_ids) == 2 and all(re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", r) for r in run_ids)
    for doc in first:  # gs://bucket/<suite>/<run id>/<config path below configs/>
        run_id = doc["metadata"]["labels"]["accelbench/run-id"]
        assert doc["metadata"]["name"].endswith(run_id)
        config = doc["metadata"]["annotations"]["accelbench/config"]
        below = config.split("configs/", 1)[1].removesuffix(".yaml")
        assert (
            env_of(doc)["ACCELBENCH_RESULTS"]
            == f"gs://bucket/nightly/canonical_7x_default/{run_id}/{below}"
        )


def test_distinct_configs_never_share_a_jobset_name_or_a_folder(tmp_path, capsys, monkeypatch):
    """Names that meet when lowered, when punctuation becomes '-', past the name's length, or of
    punctuation only: each still its own JobSet and results folder; a config listed twice is refused."""
    monkeypatch.chdir(tmp_path)
    long = "a" * 60
    names = [
        "A",
        "a",
        "a b",
        "a-b",
        "a_b",
        f"{long}x",
        f"{long}y",
        "!!!",
        "???",
        "aggregated_results",
    ]
    body = "benchmark: {name: gemm, params: {m: 16, k: 16, n: 16}}\n"
    for name in names:
        (tmp_path / f"{name}.yaml").write_text(body)
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump({"suite_name": "s", "configs": [f"{n}.yaml" for n in names]}))
    docs = dry_run(capsys, suite=str(suite))
    jobsets = [d["metadata"]["name"] for d in docs]
    folders = [env_of(d)["ACCELBENCH_RESULTS"].rsplit("/", 1)[1] for d in docs]
    for made in (jobsets, folders):
        assert len({m.lower() for m in made}) == len(names), made
    assert all(not jobset_checks(d) for d in docs)
    assert "aggregated_results" not in folders  # the run's own folder keeps its name
    suite.write_text("suite_name: s\nconfigs: [a.yaml, ./a.yaml]\n")
    code = main(["tpums", "suite", "submit", str(suite), "--bucket", "gs://bucket", "--dry-run"])
    assert code == 2 and "listed twice" in capsys.readouterr().err


HOSTILE = "x; touch PWNED #$(touch PWNED)`touch PWNED`'\""


def test_no_hostile_name_reaches_a_shell(tmp_path, capsys, monkeypatch):
    """A suite, a config file and a bucket path named to break out of a shell: the pod's script runs
    against stub commands that record their arguments; nothing named is executed, every value arrives
    whole."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"{HOSTILE}.yaml").write_text(
        "benchmark: {name: gemm, params: {m: 16, k: 16, n: 16}}\n"
    )
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump({"suite_name": HOSTILE, "configs": [f"{HOSTILE}.yaml"]}))
    bucket = f"file://{tmp_path}/b {HOSTILE}"
    (doc,) = dry_run(
        capsys, "--install", f"pkg; touch PWNED {HOSTILE}", suite=str(suite), bucket=bucket
    )
    env = env_of(doc)
    script = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][
        0
    ]["command"]
    from accelbench.dialects.tpums.cluster import SCRIPT

    assert script[2] == SCRIPT  # one fixed text: every value comes from the environment
    Path(env["ACCELBENCH_JOB"].removeprefix("file://")).mkdir(parents=True)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for tool in ("python", "accelbench", "tpums", "gcloud"):
        (stubs / tool).write_text(
            f'#!/bin/sh\nprintf "%s\\n" "{tool}" "$@" >> "{tmp_path}/calls"\n'
        )
        (stubs / tool).chmod(0o755)
    work = tmp_path / "pod"
    work.mkdir()
    done = subprocess.run(
        script, env={**env, "PATH": f"{stubs}:/usr/bin:/bin", "JOB_COMPLETION_INDEX": "0", "TMPDIR": str(work)},
        cwd=work, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.rglob("PWNED")) and not list(Path.cwd().rglob("PWNED"))
    calls = (tmp_path / "calls").read_text().splitlines()
    assert f"pkg; touch PWNED {HOSTILE}" in calls  # pip's requirement, one argument
    assert any(c.endswith(env["ACCELBENCH_CONFIG"]) for c in calls)
    results = env["ACCELBENCH_RESULTS"].removeprefix("file://")
    assert Path(results, "version.txt").exists()  # uploaded to the hostile path, as named


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--bucket", "s3://b"), "--bucket: must be gs://"),
        (("--bucket", "gs://bkt/../other"), "'..'"),
        (("--bucket", "my-bucket"), "--bucket: must be gs://"),
        (("--bucket", "file://relative"), "--bucket"),
        (("--namespace", "Bad_NS"), "--namespace: not a name"),
        (("--queue", "a queue"), "--queue: not a label value"),
        (("--priority", ""), "--priority: not a label value"),
        (("--reservation", "x" * 64), "--reservation: not a label value"),
        (("--image", ""), "--image: is empty"),
        (("--install", " "), "--install: is empty"),
        (("--declared-duration-minutes", "0"), "--declared-duration-minutes"),
        (("--declared-duration-minutes", "-5"), "--declared-duration-minutes"),
        (("--poll-interval", "0"), "--poll-interval"),
        (("--cluster", "c"), "go together"),
        (("--cluster", "c", "--project", "p"), "go together"),
        (("--project", "P!"), "--project: not a project id"),
    ],
)
def test_bad_submit_input_is_one_line(args, says, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    given = ("--bucket", "gs://bkt", *args) if "--bucket" not in args else args
    try:
        code = main(["tpums", "suite", "submit", SUITE, *given, "--dry-run"])
    except SystemExit as stop:  # the option's parser refused it
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err


def test_filters_select_configs_and_a_bucket_is_required(capsys, monkeypatch, run_cli):
    monkeypatch.chdir(ROOT)
    assert len(dry_run(capsys, "--filter", "gemm", "--filter", "hbm")) == 2
    assert len(dry_run(capsys, "--topologies", "4x4x4")) == 1
    code, _, err = run_cli("tpums", "suite", "submit", SUITE, "--dry-run")
    assert code == 2 and "--bucket" in err
    code, _, err = run_cli(
        "tpums", "suite", "submit", SUITE, "--bucket", "gs://bkt", "--filter", "nope"
    )
    assert code == 2 and "matches" in err


def test_submitting_without_kubectl_is_one_line(monkeypatch, run_cli):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PATH", "/nonexistent")
    code, _, err = run_cli(
        "tpums", "suite", "submit", SUITE, "--bucket", "gs://bkt", "--filter", "gemm"
    )
    assert code == 2 and "kubectl is not on PATH" in err


@pytest.mark.parametrize("through", ["tpums", "microbench tpums"])
def test_each_submit_option_reaches_the_manifest(through, capsys, monkeypatch):
    """Every option of `suite submit` that shapes a manifest, through both command lines; --help
    names each with its default."""
    monkeypatch.chdir(ROOT)
    given = {
        "--namespace": "bench", "--queue": "q1", "--priority": "high", "--image": "img:1",
        "--accelerator": "tpu7x", "--declared-duration-minutes": "45", "--install": "pkg==1",
        "--reservation": "res-a", "--placement-policy": "pp-1",
    }  # fmt: skip
    from accelbench.dialects.tpums.cli import main as tpums_main

    argv = ["suite", "submit", SUITE, "--bucket", "gs://bkt", "--filter", "4x4x4", "--dry-run"]
    argv += [x for kv in given.items() for x in kv]
    code = tpums_main(argv) if through == "tpums" else main(["tpums", *argv])
    assert code == 0
    (doc,) = yaml.safe_load_all(capsys.readouterr().out)
    pod = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert (
        doc["metadata"]["namespace"] == "bench" and pod["spec"]["containers"][0]["image"] == "img:1"
    )
    labels = doc["metadata"]["labels"]
    assert (
        labels["kueue.x-k8s.io/queue-name"] == "q1"
        and labels["kueue.x-k8s.io/priority-class"] == "high"
    )
    assert pod["metadata"]["labels"]["declared-duration-minutes"] == "45"
    assert env_of(doc)["ACCELBENCH_INSTALL"] == "pkg==1"
    assert pod["spec"]["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu7x",
        "cloud.google.com/gke-tpu-topology": "4x4x4",
        "cloud.google.com/reservation-name": "res-a",
        "cloud.google.com/placement-policy-name": "pp-1",
    }
    assert any(t["key"] == "cloud.google.com/reservation-name" for t in pod["spec"]["tolerations"])


def test_what_the_pods_install(capsys, monkeypatch):
    """Default: this checkout's wheel from the run's .job folder, built from the commit named; --image
    alone: nothing; --install: that requirement. No placement policy unless one is named."""
    monkeypatch.chdir(ROOT)
    (default,) = dry_run(capsys, "--filter", "4x4x4")
    env = env_of(default)
    assert re.fullmatch(r"\./accelbench-[\w.]+-py3-none-any\.whl\[jax\]", env["ACCELBENCH_INSTALL"])
    assert env["ACCELBENCH_JOB"].endswith("/.job") and env["ACCELBENCH_COMMIT"]
    selector = default["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "nodeSelector"
    ]
    assert "cloud.google.com/placement-policy-name" not in selector
    (image,) = dry_run(capsys, "--filter", "4x4x4", "--image", "mine:1")
    assert env_of(image)["ACCELBENCH_INSTALL"] == "" and env_of(image)["ACCELBENCH_COMMIT"] == ""


def test_help_of_submit_and_collect_names_every_option_with_its_default():
    from accelbench.dialects.tpums.cli import build_parser

    parser = build_parser()
    groups = next(a for a in parser._actions if a.dest == "group").choices
    suites = next(a for a in groups["suite"]._actions if a.dest == "command").choices
    for command in ("submit", "collect"):
        for action in suites[command]._actions:
            if action.option_strings and action.dest != "help":
                assert "default" in (action.help or ""), (command, action.option_strings)


KUBECTL_FAKE = r'''#!{python}
"""A stand-in kubectl: records its calls; `create` stores the JobSet; `get` says what STATE says."""
import json, os, sys
import yaml
here = os.environ["FAKE_CLUSTER"]
open(os.path.join(here, "calls"), "a").write(json.dumps(sys.argv[1:]) + "\n")
if sys.argv[1] == "create":
    doc = yaml.safe_load(sys.stdin)
    json.dump(doc, open(os.path.join(here, doc["metadata"]["name"] + ".json"), "w"))
elif sys.argv[1] == "get":
    state = open(os.path.join(here, "STATE")).read().strip()
    items = [json.load(open(os.path.join(here, f))) for f in sorted(os.listdir(here)) if f.endswith(".json")]
    for item in items:
        item["status"] = {{"conditions": [{{"type": state, "status": "True"}}]}} if state else {{}}
    print(json.dumps({{"items": items}}))
'''


@pytest.fixture
def fake_cluster(tmp_path, monkeypatch):
    here = tmp_path / "cluster"
    here.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(KUBECTL_FAKE.format(python=sys.executable))
    kubectl.chmod(0o755)
    gcloud = bin_dir / "gcloud"
    gcloud.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{here}/gcloud"\n')
    gcloud.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLUSTER", str(here))
    return here


@pytest.mark.parametrize(("state", "code"), [("Completed", 0), ("Failed", 1)])
def test_jobsets_are_watched_then_deleted_once_they_end(
    state, code, fake_cluster, tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(ROOT)
    (fake_cluster / "STATE").write_text(state)
    bucket = f"file://{tmp_path}/bucket"
    got, _, err = run_cli(
        "tpums", "suite", "submit", SUITE, "--bucket", bucket, "--install", "accelbench==0.1.0",
        "--filter", "2x2x1/gemm", "--filter", "hbm", "--cluster", "c1", "--project", "p1", "--zone", "z1",
    )  # fmt: skip
    assert got == code, err
    calls = [json.loads(line) for line in (fake_cluster / "calls").read_text().splitlines()]
    created = [c for c in calls if c[0] == "create"]
    deleted = [n for c in calls if c[0] == "delete" for n in c[2:] if n.startswith("tpums-")]
    assert len(created) == 2 and len(deleted) == 2  # each deleted once, as it ended
    assert (fake_cluster / "gcloud").read_text().split() == [
        "container", "clusters", "get-credentials", "c1", "--zone=z1", "--project=p1",
    ]  # fmt: skip
    (run,) = [p for p in (tmp_path / "bucket" / "canonical_7x_default").iterdir()]
    record = json.loads((run / ".job" / "submitted.json").read_text())
    assert record["install"] == "accelbench==0.1.0" and len(record["configs"]) == 2
    assert f"{state}" in err


def test_the_deadline_stops_the_wait_and_no_cleanup_keeps_the_jobsets(
    fake_cluster, tmp_path, monkeypatch, run_cli
):
    """Running past --declared-duration-minutes: each is a timeout (exit 1); with --no-cleanup none
    is deleted."""
    from accelbench.dialects.tpums import nightly

    monkeypatch.chdir(ROOT)
    (fake_cluster / "STATE").write_text("")
    clock = iter(range(0, 10_000, 45))
    monkeypatch.setattr(nightly.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(nightly.time, "sleep", lambda s: None)
    code, _, err = run_cli(
        "tpums", "suite", "submit", SUITE, "--bucket", f"file://{tmp_path}/b", "--image", "img:1",
        "--filter", "hbm", "--declared-duration-minutes", "1", "--poll-interval", "5", "--no-cleanup",
    )  # fmt: skip
    assert code == 1 and "Running" in err
    calls = (fake_cluster / "calls").read_text()
    assert '"delete"' not in calls


def _shrunk(config: Path, into: Path) -> None:
    """A canonical config at CPU scale: the same benchmark, fields, cases and sweeps, small sizes."""
    data = yaml.safe_load(config.read_text())
    bench = data["benchmark"]
    bench["params"].update(warmup_tries=1, num_runs=2)
    for case in bench.get("cases", []):
        case.update(m=64, k=64, n=64)
    sweep = bench.get("sweep", {})
    if "matrix_dim" in sweep:
        sweep["matrix_dim"] = [128]
    if "size" in sweep:
        sweep["size"] = {"start": 4096, "end": 8192, "multiplier": 2}
    into.parent.mkdir(parents=True, exist_ok=True)
    into.write_text(yaml.safe_dump(data, sort_keys=False))


KUBECTL_PODS = r'''#!{python}
"""A stand-in kubectl that runs each JobSet's pods here, as the container would: `bash -c SCRIPT` with
the container's environment and JOB_COMPLETION_INDEX, in a fresh folder, the fresh virtual environment
first on PATH, CPU devices for the slice's TPU devices (2 a chip). A multi-host JobSet runs its first
and last pods (the others run the same script with another index)."""
import json, os, subprocess, sys, tempfile
import yaml
here = os.environ["FAKE_CLUSTER"]
open(os.path.join(here, "calls"), "a").write(json.dumps(sys.argv[1:]) + "\n")
if sys.argv[1] == "create":
    doc = yaml.safe_load(sys.stdin)
    spec = doc["spec"]["replicatedJobs"][0]["template"]["spec"]
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    chips = 1
    for d in pod["nodeSelector"]["cloud.google.com/gke-tpu-topology"].split("x"):
        chips *= int(d)
    env = {{e["name"]: e["value"] for e in container["env"]}}
    env.update(PATH=os.environ["POD_PATH"], HOME=os.environ["HOME"], JAX_PLATFORMS="cpu",
               XLA_FLAGS=f"--xla_force_host_platform_device_count={{2 * chips}}",
               PIP_NO_INDEX="1", PIP_NO_DEPS="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    codes = []
    for index in sorted({{0, spec["completions"] - 1}}):
        with tempfile.TemporaryDirectory() as cwd:
            done = subprocess.run(container["command"], env={{**env, "JOB_COMPLETION_INDEX": str(index), "TMPDIR": cwd}},
                                  cwd=cwd, capture_output=True, text=True)
        name = doc["metadata"]["name"]
        open(os.path.join(here, f"{{name}}.{{index}}.log"), "w").write(done.stdout + done.stderr)
        codes.append(done.returncode)
    doc["status"] = {{"conditions": [{{"type": "Failed" if any(codes) else "Completed", "status": "True"}}]}}
    json.dump(doc, open(os.path.join(here, doc["metadata"]["name"] + ".json"), "w"))
elif sys.argv[1] == "get":
    items = [json.load(open(os.path.join(here, f))) for f in sorted(os.listdir(here)) if f.endswith(".json")]
    print(json.dumps({{"items": items}}))
'''


@pytest.mark.slow  # a wheel built, a virtual environment made, five configs run as seven pods
def test_a_whole_submission_runs_here_against_a_file_bucket(tmp_path, monkeypatch, run_cli):
    """The canonical suite (at CPU scale, a table and an xla flags file added) submitted for real: the
    checkout's wheel built and sent, each pod's script run as the container runs it in a fresh
    virtual environment from a folder that is not the checkout, only kubectl a stub. The rows, the
    per-category CSVs and the report appear in the bucket, and `suite collect` builds the report."""
    work = tmp_path / "submitter"
    configs = work / "configs" / "tpums"
    suite = yaml.safe_load(Path(SUITE).read_text())
    for config in suite["configs"]:
        _shrunk(ROOT / config, work / config)
    (work / "configs" / "shapes").mkdir()
    (work / "configs" / "shapes" / "tiny.csv").write_text("m,k,n\n32,32,32\n64,32,16\n")
    (configs / "tpu7x" / "2x2x1" / "gemm_csv.yaml").write_text(
        "benchmark: {name: gemm, params: {num_runs: 2}, cases_from_csv: configs/shapes/tiny.csv}\n"
    )
    suite["configs"].append("configs/tpums/tpu7x/2x2x1/gemm_csv.yaml")
    (work / "suite.yaml").write_text(yaml.safe_dump(suite))
    (work / "flags.yaml").write_text("gemm: {flags: [], env: {FROM_THE_FLAGS_FILE: '1'}}\n")
    venv = tmp_path / "venv"  # fresh: pip and the dependencies seen from the test's own environment
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site_dir,) = venv.glob("lib/python*/site-packages")
    shared = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site_dir / "shared.pth").write_text("\n".join(dict.fromkeys(shared)) + "\n")
    here = tmp_path / "cluster"
    here.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").write_text(KUBECTL_PODS.format(python=sys.executable))
    (bin_dir / "kubectl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("POD_PATH", f"{venv / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_CLUSTER", str(here))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.chdir(work)
    bucket = tmp_path / "bucket"
    code, _, err = run_cli(
        "tpums", "suite", "submit", "suite.yaml", "--bucket", f"file://{bucket}",
        "--xla_flags_file_path", "flags.yaml", "--poll-interval", "1",
    )  # fmt: skip
    logs = {p.name: p.read_text() for p in here.glob("*.log")}
    assert code == 0, (err, logs)
    assert len(logs) == 7  # one pod each, and the first and last of the 4x4x4 slice's 16
    for (
        log
    ) in logs.values():  # the pod's first line: the version installed from the wheel, its commit
        assert re.match(r"microbench \S+ \(commit \w+", log), log[:300]
    installed = subprocess.run(
        [venv / "bin" / "python", "-c", "import accelbench; print(accelbench.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
    ).stdout  # fmt: skip
    assert installed.startswith(str(venv)), installed  # the wheel, not the checkout
    (run,) = (bucket / "canonical_7x_default").iterdir()
    folders = {p.parent.relative_to(run).as_posix() for p in run.rglob("summary.csv")}
    assert folders == {
        "tpums/tpu7x/4x4x4/all_reduce", "tpums/tpu7x/2x2x1/all_gather", "tpums/tpu7x/2x2x1/all_reduce",
        "tpums/tpu7x/2x2x1/gemm", "tpums/tpu7x/2x2x1/hbm", "tpums/tpu7x/2x2x1/gemm_csv",
    }  # fmt: skip
    assert (run / "tpums/tpu7x/2x2x1/gemm_csv/version.txt").read_text().startswith("microbench")
    assert {p.name for p in (run / "aggregated_results").iterdir()} == {
        "collectives.csv",
        "hbm.csv",
        "gemm.csv",
    }
    report = (run / "consolidated_report.md").read_text()
    assert report.startswith("# canonical\\_7x\\_default") and f"run: {run.name}" in report
    assert "configs measured: 6 of 6" in report and "JAX: " in report
    calls = [json.loads(line) for line in (here / "calls").read_text().splitlines()]
    assert sum(1 for c in calls if c[0] == "delete" for n in c[2:] if n.startswith("tpums-")) == 6
    code, _, err = run_cli(
        "tpums",
        "suite",
        "collect",
        f"file://{bucket}/canonical_7x_default",
        "--output_dir",
        "report",
    )
    assert code == 0, err
    assert Path("report/consolidated_report.md").read_text() == report


SUMMARY = "m,k,n,name_given,jax_version,wall_clock_p50_ms\n16,16,16,gemm,0.10.2,0.5\n32,32,32,gemm,0.10.2,0.9\n"


def _run_folder(root: Path, run_id: str, folders: dict[str, str]) -> Path:
    run = root / run_id
    for folder, text in folders.items():
        (run / folder).mkdir(parents=True, exist_ok=True)
        (run / folder / "summary.csv").write_text(text)
    return run


def test_collect_keys_configs_by_their_full_path_and_reads_the_latest_run(
    tmp_path, monkeypatch, run_cli
):
    """v6e/gemm and tpu7x/gemm stay two sections; the latest run unless --run-id names one; the
    per-category CSVs; a run id that is not there is one line."""
    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "bucket" / "nightly"
    _run_folder(suite, "20261101-000000-aaaa", {"old/gemm": SUMMARY})
    _run_folder(
        suite,
        "20261102-000000-bbbb",
        {"v6e/gemm": SUMMARY, "tpu7x/gemm": SUMMARY.replace("0.5", "7.5")},
    )
    code, _, err = run_cli("tpums", "suite", "collect", str(suite), "--output_dir", "r")
    assert code == 0, err
    report = Path("r/consolidated_report.md").read_text()
    assert "## v6e/gemm" in report and "## tpu7x/gemm" in report and "old/gemm" not in report
    assert "run: 20261102-000000-bbbb" in report and "JAX: 0.10.2" in report
    gemm = Path("r/aggregated_results/gemm.csv").read_text().splitlines()
    assert gemm[0].startswith("config,") and len(gemm) == 5  # both configs' rows, each named
    code, _, err = run_cli(
        "tpums",
        "suite",
        "collect",
        str(suite),
        "--run-id",
        "20261101-000000-aaaa",
        "--output_dir",
        "o",
    )
    assert code == 0 and "## old/gemm" in Path("o/consolidated_report.md").read_text()
    code, _, err = run_cli(
        "tpums", "suite", "collect", str(suite), "--run-id", "20990101-000000-cccc"
    )
    assert code == 2 and "holds no run" in err and len(err.strip().splitlines()) == 1


def test_collect_passes_over_files_it_cannot_read_and_never_hangs(tmp_path, monkeypatch, run_cli):
    """An empty, a binary and an unterminated-quote summary.csv, a FIFO, a link to a device: each named
    and passed over (the report says why); the good config is reported. A report folder that is a file,
    and a path that is no folder: one line."""
    monkeypatch.chdir(tmp_path)
    run = _run_folder(
        tmp_path / "b",
        "20261102-000000-bbbb",
        {
            "good": SUMMARY,
            "empty": "",
            "binary": "",
            "quote": 'm,k\n1,"2\n3,4\n',
            "fifo": "",
            "device": "",
        },
    )
    (run / "binary" / "summary.csv").write_bytes(b"\xff\xfe\x00\x81" * 64)
    (run / "fifo" / "summary.csv").unlink()
    os.mkfifo(run / "fifo" / "summary.csv")
    (run / "device" / "summary.csv").unlink()
    (run / "device" / "summary.csv").symlink_to("/dev/zero")
    code, _, err = run_cli("tpums", "suite", "collect", str(tmp_path / "b"), "--output_dir", "r")
    assert code == 0, err
    report = Path("r/consolidated_report.md").read_text()
    for bad in ("empty", "binary", "quote", "fifo", "device"):
        assert f"## {bad}" in report and f"{bad}/summary.csv" in err, bad
    assert "configs measured: 1 of 6" in report
    Path("afile").write_text("x")
    code, _, err = run_cli(
        "tpums", "suite", "collect", str(tmp_path / "b"), "--output_dir", "afile"
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "afile" in err
    code, _, err = run_cli("tpums", "suite", "collect", "afile")
    assert code == 2 and "not a folder" in err


def test_every_cell_and_heading_of_the_markdown_report_stays_in_its_cell(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    text = 'm,"a|b\nc",name_given\n16,"x | y\nz",gemm\n'
    _run_folder(tmp_path / "b", "20261102-000000-bbbb", {"g|h": text})
    code, _, err = run_cli("tpums", "suite", "collect", str(tmp_path / "b"), "--output_dir", "r")
    assert code == 0, err
    table = [
        line
        for line in Path("r/consolidated_report.md").read_text().splitlines()
        if line.startswith("|")
    ]
    bars = {len(re.findall(r"(?<!\\)\|", line)) for line in table}
    assert len(table) == 3 and len(bars) == 1, table  # header, rule, one row: as many bars each


def test_a_suite_output_folder_that_cannot_be_one_is_one_line(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    Path("g.yaml").write_text(
        "benchmark: {name: gemm, params: {m: 16, k: 16, n: 16, num_runs: 2}}\n"
    )
    Path("s.yaml").write_text("suite_name: s\nconfigs: [g.yaml]\n")
    Path("afile").write_text("x")
    for out in ("afile", "afile/deeper"):
        code, _, err = run_cli("tpums", "suite", "run", "s.yaml", "--output_dir", out)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "afile" in err, err
    assert not list(tmp_path.rglob("*.csv"))


def _code(path: Path) -> list[str]:
    """A file's commands: every line of a script or manifest; a page's fenced blocks and `spans`."""
    text = path.read_text()
    if path.suffix != ".md":
        return text.splitlines()
    fenced = re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S)
    return [line for block in fenced for line in block.splitlines()] + re.findall(
        r"`([^`\n]+)`", text
    )


def test_every_pip_install_in_docs_scripts_and_manifests_installs_this_project():
    """`microbench` on the package index is another project: every install command names this one (a
    checkout `.`, `accelbench`, its wheel, what a submission says), or its own requirements."""
    from accelbench.dialects.tpums.cluster import SCRIPT

    ours = re.compile(
        r"""["']?(\.|\.\[[\w,]+\]|accelbench(\[[\w,]+\])?|\S+\.whl|"\$\w+"|requirements\.txt|pip|"\$\{TORCH_SPEC:-torch==[\d.]+\}")["']?"""
    )
    places = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "scripts").glob("*.sh")]
    places += [p for p in (ROOT / "Ironwood").rglob("*") if p.suffix in (".md", ".sh", ".yaml")]
    lines = [(p.name, line) for p in places if p.name != "results_gpu.md" for line in _code(p)]
    for where, line in [*lines, ("the pod's script", SCRIPT)]:
        for command in re.findall(r"pip install ([^`|&;)\n]*)", line):
            words = command.split("#")[0].split()
            named = [
                w
                for i, w in enumerate(words)
                if not w.startswith("-") and not (i and words[i - 1] in VALUED)
            ]
            assert named and all(ours.fullmatch(w) for w in named), (where, command)


VALUED = (
    "--target",
    "--index-url",
    "--upgrade-strategy",
    "-w",
    "-f",
)  # options whose value is no distribution
