"""`tpums suite submit`: the reference's nightly pipeline (its nightly_runner and workload_submitter),
point by point. The suite's configs are chosen and checked; with --cluster/--project/--region|--zone the
cluster's credentials are fetched; this checkout's wheel (unless --image or --install says otherwise),
each config with the tables it reads, the xla flags file and `submitted.json` go to the run's `.job/`;
one JobSet a config is created; a status line comes every --poll-interval seconds until all end or
--declared-duration-minutes pass; each JobSet that ends is deleted (--no-cleanup keeps them, and a
Ctrl-C or the deadline deletes those left); then `aggregated_results/<category>.csv` and the
consolidated report are written beside the results.
"""

from __future__ import annotations

import importlib.util
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from accelbench.dialects.tpums.cluster import (
    JOB_FOLDER,
    RUN_LABEL,
    Cluster,
    Entry,
    Run,
    chosen,
    config_in_job,
    jobset,
    jobset_names,
    new_run_id,
    topology_of,
)  # fmt: skip
from accelbench.errors import UserError, safe_stem, visible

TERMINAL = ("Completed", "Failed")
TABLE_KEYS = ("cases_from_csv", "csv_shapes")  # a TPUMS config's tables (stage B, stage A)


def submit(
    path: str, cluster: Cluster, patterns: list[str], topologies: list[str], dry: bool
) -> int:
    """Everything the pipeline does, in its order; 0 where every JobSet completed."""
    from accelbench.dialects.tpums.suite import read_suite, suite_configs

    suite = read_suite(path)
    entries = chosen(
        [Entry(c, at, folder, topology_of(c)) for c, at, folder in suite_configs(suite, path)],
        patterns,
        topologies,
    )
    run_id = new_run_id()
    entries = [
        replace(e, name=n) for e, n in zip(entries, jobset_names(entries, run_id), strict=True)
    ]
    tables = {e.folder: _tables(e) for e in entries}
    root = f"{cluster.bucket.rstrip('/')}/{safe_stem(suite.name)}/{run_id}"
    kubectl = "kubectl" if dry else _tool("kubectl")
    if not dry:
        _credentials(cluster)
    wheel = None if cluster.image is not None or cluster.install is not None else _wheel(dry)
    commit = _commit() if wheel else ""
    run = Run(run_id, root, cluster.install or (f"./{wheel[0]}[jax]" if wheel else ""), commit)
    documents = [jobset(e, cluster, run) for e in entries]
    if dry:
        print(manifest_text(*documents), end="")
        return 0
    from accelbench.dialects.tpums.collect import publish

    record = _record(suite, entries, cluster, run)
    publish(f"{root}/{JOB_FOLDER}", _job_files(entries, tables, cluster, wheel, record), "--bucket")
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
    """A command's output, or one line with the last thing it said."""
    done = subprocess.run(argv, input=given, capture_output=True, text=True)
    if done.returncode:
        said = (
            done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}"
        ).splitlines()
        raise UserError(f"{Path(argv[0]).name} {argv[1]} failed: {said[-1]}", key=key)
    return done.stdout


def _credentials(cluster: Cluster) -> None:
    """`gcloud container clusters get-credentials`, as the reference's runner does first."""
    if cluster.cluster:
        where = f"--region={cluster.region}" if cluster.region else f"--zone={cluster.zone}"
        argv = ["container", "clusters", "get-credentials", cluster.cluster, where]
        _call([_tool("gcloud"), *argv, f"--project={cluster.project}"], "--cluster")


def _wheel(dry: bool) -> tuple[str, bytes]:
    """This checkout's wheel, built now (its name only, on a dry run): what every pod installs."""
    name = f"accelbench-{_version()}-py3-none-any.whl"
    root = Path(__file__).resolve().parents[4]  # src/accelbench/dialects/tpums/ in a checkout
    if not (root / "pyproject.toml").is_file():
        raise UserError(
            "this installation is no checkout to build a wheel from: give --install SPEC, or "
            "--image IMAGE holding the project",
            key="suite submit",
        )
    if dry:
        return name, b""
    isolation = ["--no-build-isolation"] * _can_build_here()
    with tempfile.TemporaryDirectory() as out:
        pip = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w", out]
        _call([*pip, str(root)], "suite submit (building this checkout's wheel)")
        (built,) = Path(out).glob("accelbench-*.whl")
        return built.name, built.read_bytes()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("accelbench")
    except PackageNotFoundError:  # run from a source tree never installed
        return "unknown"


def _can_build_here() -> bool:
    """Whether this environment's setuptools builds a wheel itself (70.1 on, or with `wheel`); else
    pip fetches one for the build, as for any source install."""
    from importlib.metadata import version

    if importlib.util.find_spec("setuptools") is None:
        return False
    major, minor = (int(x) for x in re.findall(r"\d+", version("setuptools"))[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def _commit() -> str:
    from accelbench.platform.environment import git_commit, git_dirty

    return git_commit() + ("-dirty" if git_dirty() else "")


def _tables(entry: Entry) -> dict[str, str]:
    """The files a config reads, found as the run would find them (the working directory, then the
    config's folder): where each travels beside it -> where it is here. A TPUMS config only."""
    from accelbench.config.loader import load_config

    loaded = load_config(entry.located)
    if "benchmark" not in loaded.raw:
        raise UserError("a cluster run takes TPUMS configs (benchmark: ...)", file=entry.located)
    bench, out = loaded.raw["benchmark"], {}
    for key in TABLE_KEYS:
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
    from accelbench.platform.environment import git_branch

    return {
        "suite": suite.name,
        "description": suite.description,
        "run_id": run.run_id,
        "submitted": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "version": _version(),
        "commit": run.commit or None,
        "branch": (git_branch() or None) if run.commit else None,
        "install": run.install or None,
        "image": cluster.image,
        "namespace": cluster.namespace,
        "cluster": cluster.cluster or None,
        "configs": {e.folder: e.config for e in entries},
        "jobsets": {e.folder: e.name for e in entries},
    }


def _job_files(
    entries: list[Entry], tables: dict[str, dict[str, str]], cluster: Cluster,
    wheel: tuple[str, bytes] | None, record: dict[str, Any],
) -> dict[str, str | bytes]:  # fmt: skip
    """What the pods read from the run's .job/ folder, by name in it."""
    files: dict[str, str | bytes] = {"submitted.json": json.dumps(record, indent=2) + "\n"}
    for e in entries:
        files[config_in_job(e)] = _read(e.located)
        for travels, here in tables[e.folder].items():
            files[f"configs/{e.folder}/{travels}"] = _read(here)
    if cluster.xla_flags_file_path:
        from accelbench.dialects.tpums.plan import flag_sets

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
    """Create every JobSet, then watch them until all end or the deadline passes, deleting each that
    ends (and, on a Ctrl-C or at the deadline, those left) unless --no-cleanup."""
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
                subprocess.run(
                    [kubectl, "delete", "jobset", *ended, *ns, "--wait=false"], capture_output=True
                )
                deleted.update(ended)
            left = deadline - time.monotonic()
            counts = ", ".join(
                f"{sorted(states.values()).count(s)} {s}" for s in sorted(set(states.values()))
            )
            print(visible(f"[{run_id}] {counts}"), file=sys.stderr)
            if all(s in TERMINAL for s in states.values()) or left <= 0:
                return {n: s if s in TERMINAL else "Timeout" for n, s in states.items()}
            time.sleep(min(cluster.poll_interval, left))
    finally:
        if cluster.cleanup and (left_over := [n for n in names if n not in deleted]):
            subprocess.run(
                [kubectl, "delete", "jobset", *left_over, *ns, "--wait=false"], capture_output=True
            )


def _states(kubectl: str, ns: list[str], run_id: str) -> dict[str, str]:
    """This run's JobSets as the cluster tells them: Completed, Failed, Queued (suspended: Kueue has
    not admitted it) or Running; nothing where kubectl cannot tell now."""
    got = subprocess.run(
        [kubectl, "get", "jobsets", *ns, "-l", f"{RUN_LABEL}={run_id}", "-o", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    try:
        items = json.loads(got.stdout).get("items", []) if got.returncode == 0 else []
    except ValueError:
        return {}
    out = {}
    for item in items:
        true = {
            c.get("type")
            for c in item.get("status", {}).get("conditions", [])
            if c.get("status") == "True"
        }
        ended = [t for t in TERMINAL if t in true]
        queued = "Suspended" in true or item.get("spec", {}).get("suspend")
        out[item["metadata"]["name"]] = ended[0] if ended else "Queued" if queued else "Running"
    return out


def _report(root: str, states: dict[str, str]) -> int:
    """The per-category CSVs and the consolidated report, written beside the results; 1 unless
    every JobSet completed."""
    from accelbench.dialects.tpums.collect import collect_run, publish
    from accelbench.dialects.tpums.suite import REPORT, consolidated

    try:
        publish(root, consolidated(collect_run(root)), "--bucket")
        print(visible(f"consolidated report: {root}/{REPORT[0]}"), file=sys.stderr)
    except UserError as error:  # nothing measured anywhere: said, and the exit code says the rest
        print(visible(f"warning: {error}"), file=sys.stderr)
    return 0 if all(s == "Completed" for s in states.values()) else 1
