"""`tpums suite submit`, the reference's nightly pipeline point by point: configs chosen and checked,
credentials fetched, the wheel, configs and tables sent to the run's `.job/`, one JobSet a config
watched until all end or the deadline passes, then the per-category CSVs and the report."""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any

from accelbench.benchmarks.tpu_flags import flag_sets
from accelbench.config.loader import load_config
from accelbench.dialects.tpums import cluster as jobs
from accelbench.dialects.tpums.cluster import Cluster, Entry, Run
from accelbench.dialects.tpums.collect import collect_run, publish
from accelbench.dialects.tpums.suite import REPORT, consolidated, read_suite, suite_configs
from accelbench.errors import UserError, visible
from accelbench.names import portable_name
from accelbench.platform.environment import git_branch, git_commit, git_dirty

TERMINAL = ("Completed", "Failed")


def submit(
    path: str, cluster: Cluster, patterns: list[str], topologies: list[str], dry: bool
) -> int:
    suite = read_suite(path)
    entries = jobs.chosen(
        [Entry(c, at, folder, jobs.topology_of(c)) for c, at, folder in suite_configs(suite, path)],
        patterns,
        topologies,
    )
    run_id = jobs.new_run_id()
    names = jobs.jobset_names(entries, run_id)
    entries = [replace(e, name=n) for e, n in zip(entries, names, strict=True)]
    tables = {e.folder: _tables(e) for e in entries}
    root = f"{cluster.bucket.rstrip('/')}/{portable_name(suite.name)}/{run_id}"
    kubectl = "kubectl" if dry else _tool("kubectl")
    if not dry:
        _credentials(cluster)
    wheel = None if cluster.image is not None or cluster.install is not None else _wheel(dry)
    commit = (git_commit() + ("-dirty" if git_dirty() else "")) if wheel else ""
    run = Run(run_id, root, cluster.install or (f"./{wheel[0]}[jax]" if wheel else ""), commit)
    documents = [jobs.jobset(e, cluster, run) for e in entries]
    if dry:
        print(manifest_text(*documents), end="")
        return 0

    record = _record(suite, entries, cluster, run)
    publish(
        f"{root}/{jobs.JOB_FOLDER}", _job_files(entries, tables, cluster, wheel, record), "--bucket"
    )
    print(visible(f"run {run_id}: {len(entries)} JobSets, results under {root}/"), file=sys.stderr)
    states = _run_jobs(kubectl, documents, cluster, run_id)
    return _report(root, states)


def manifest_text(*documents: dict[str, Any]) -> str:
    """YAML for kubectl and for people: the pod's script as a block, as it reads."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    block = lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|" * ("\n" in s))  # noqa: E731
    Dumper.add_representer(str, block)
    return str(yaml.dump_all(documents, Dumper=Dumper, sort_keys=False))


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise UserError(
            f"{name} is not on PATH; --dry-run prints the manifests to apply elsewhere",
            key="suite submit",
        )
    return found


def _call(argv: list[str], key: str, given: str | None = None) -> str:
    done = subprocess.run(argv, input=given, capture_output=True, text=True)
    if done.returncode:
        said = (done.stderr + done.stdout).strip().splitlines() or [f"exit {done.returncode}"]
        worst = [line for line in said if "error" in line.lower()] or said
        raise UserError(f"{Path(argv[0]).name} {argv[1]} failed: {worst[-1]}", key=key)
    return done.stdout


def _credentials(cluster: Cluster) -> None:
    """`gcloud container clusters get-credentials`, as the reference's runner does first."""
    if cluster.cluster:
        where = f"--region={cluster.region}" if cluster.region else f"--zone={cluster.zone}"
        argv = ["container", "clusters", "get-credentials", cluster.cluster, where]
        _call([_tool("gcloud"), *argv, f"--project={cluster.project}"], "--cluster")


def _wheel(dry: bool) -> tuple[str, bytes]:
    """This checkout's wheel (its name only, on a dry run): with this environment's setuptools where
    it can, else with one pip fetches."""
    root = Path(__file__).resolve().parents[4]  # src/accelbench/dialects/tpums/ in a checkout
    if not (root / "pyproject.toml").is_file():
        raise UserError(
            "this installation is no checkout to build a wheel from: give --install SPEC, or "
            "--image IMAGE holding the project",
            key="suite submit",
        )
    if dry:
        return f"accelbench-{version('accelbench')}-py3-none-any.whl", b""
    with tempfile.TemporaryDirectory() as out:
        pip = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", out, str(root)]
        if subprocess.run([*pip, "--no-build-isolation"], capture_output=True).returncode:
            _call(pip, "suite submit (building this checkout's wheel)")
        (built,) = Path(out).glob("accelbench-*.whl")
        return built.name, built.read_bytes()


def _tables(entry: Entry) -> dict[str, str]:
    """The files a config reads, found as the run would find them (the working directory, then the
    config's folder): where each travels beside it -> where it is here. A TPUMS config only."""
    loaded = load_config(entry.located)
    if "benchmark" not in loaded.raw:
        raise UserError("a cluster run takes TPUMS configs (benchmark: ...)", file=entry.located)
    bench, out = loaded.raw["benchmark"], {}
    for key in ("cases_from_csv", "csv_shapes"):  # stage B's key, stage A's
        named = bench.get(key)
        if not isinstance(named, str) or named.startswith(("http://", "https://")):
            continue
        travels = posixpath.normpath(named.replace("\\", "/"))
        if os.path.isabs(named) or travels.split("/")[0] == "..":
            raise UserError(
                "a cluster run sends tables named below the working directory or the config's "
                f"folder, not {named[:80]!r}",
                file=entry.located, key=f"benchmark.{key}",
            )  # fmt: skip
        beside = os.path.join(os.path.dirname(entry.located), named)
        out[travels] = named if os.path.isfile(named) else beside
    return out


def _record(suite: Any, entries: list[Entry], cluster: Cluster, run: Run) -> dict[str, Any]:
    """submitted.json: what was run, from what, where; the report's header reads it."""
    return {
        "suite": suite.name,
        "description": suite.description,
        "run_id": run.run_id,
        "submitted": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "version": version("accelbench"),
        "commit": run.commit or None,
        "branch": (git_branch() or None) if run.commit else None,
        "install": run.install or None,
        "image": cluster.image,
        "configs": {e.folder: e.config for e in entries},
    }


def _job_files(
    entries: list[Entry], tables: dict[str, dict[str, str]], cluster: Cluster,
    wheel: tuple[str, bytes] | None, record: dict[str, Any],
) -> dict[str, str | bytes]:  # fmt: skip
    files: dict[str, str | bytes] = {"submitted.json": json.dumps(record, indent=2) + "\n"}
    for e in entries:
        files[jobs.config_in_job(e)] = _read(e.located)
        for travels, here in tables[e.folder].items():
            files[f"configs/{e.folder}/{travels}"] = _read(here)
    if cluster.xla_flags_file_path:
        flag_sets(cluster.xla_flags_file_path)  # a bad file is one line here, not in every pod
        files["xla_flags.yaml"] = _read(cluster.xla_flags_file_path)
    if wheel:
        files[wheel[0]] = wheel[1]
    return files


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise UserError(f"cannot read it: {error.strerror}", file=path) from None


def _run_jobs(
    kubectl: str, documents: list[dict[str, Any]], cluster: Cluster, run_id: str
) -> dict[str, str]:
    """Every JobSet created and watched until all end or the deadline passes; each deleted as it ends
    (the rest on a Ctrl-C or at the deadline) unless --no-cleanup."""
    names = [d["metadata"]["name"] for d in documents]
    states, deleted = dict.fromkeys(names, "Submitted"), set()
    deadline = time.monotonic() + cluster.declared_duration_minutes * 60
    ns = ["-n", cluster.namespace]
    try:
        for doc in documents:
            _call([kubectl, "create", "-f", "-"], "suite submit", manifest_text(doc))
        while True:
            for name, state in _states(kubectl, ns, run_id).items():
                if states.get(name) not in (None, *TERMINAL) and state != states[name]:
                    states[name] = state
                    print(visible(f"{name}: {state}"), file=sys.stderr)
            ended = [n for n, s in states.items() if s in TERMINAL and n not in deleted]
            if cluster.cleanup and ended:
                _delete(kubectl, ended, ns)
                deleted.update(ended)
            left = deadline - time.monotonic()
            counts = ", ".join(f"{n} {s}" for s, n in sorted(Counter(states.values()).items()))
            print(visible(f"[{run_id}] {counts}"), file=sys.stderr)
            if all(s in TERMINAL for s in states.values()) or left <= 0:
                return {n: s if s in TERMINAL else "Timeout" for n, s in states.items()}
            time.sleep(min(cluster.poll_interval, left))
    finally:
        if cluster.cleanup and (left_over := [n for n in names if n not in deleted]):
            _delete(kubectl, left_over, ns)


def _delete(kubectl: str, names: list[str], ns: list[str]) -> None:
    subprocess.run([kubectl, "delete", "jobset", *names, *ns, "--wait=false"], capture_output=True)


def _states(kubectl: str, ns: list[str], run_id: str) -> dict[str, str]:
    """This run's JobSets: Completed, Failed, Queued (suspended: Kueue has not admitted it) or
    Running; nothing where kubectl cannot tell now."""
    got = subprocess.run(
        [kubectl, "get", "jobsets", *ns, "-l", f"{jobs.RUN_LABEL}={run_id}", "-o", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    try:
        items = json.loads(got.stdout).get("items", []) if got.returncode == 0 else []
    except ValueError:
        return {}
    out = {}
    for item in items:
        conditions = item.get("status", {}).get("conditions", [])
        true = {c.get("type") for c in conditions if c.get("status") == "True"}
        ended = [t for t in TERMINAL if t in true]
        queued = "Suspended" in true or item.get("spec", {}).get("suspend")
        out[item["metadata"]["name"]] = ended[0] if ended else "Queued" if queued else "Running"
    return out


def _report(root: str, states: dict[str, str]) -> int:
    """The per-category CSVs and the report beside the results; 1 unless every JobSet completed."""
    try:
        publish(root, consolidated(collect_run(root)), "--bucket")
        print(visible(f"consolidated report: {root}/{REPORT[0]}"), file=sys.stderr)
    except UserError as error:  # nothing measured anywhere: said, and the exit code says the rest
        print(visible(f"warning: {error}"), file=sys.stderr)
    return 0 if all(s == "Completed" for s in states.values()) else 1
