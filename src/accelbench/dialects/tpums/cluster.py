"""A suite on a cluster (`tpums suite submit` / `collect`): one Kubernetes JobSet per (config, topology),
queued through Kueue as the reference's nightly submitter queues them, each writing its results straight
to durable storage (a bucket URL: the run's outputs are staged and copied there), then the consolidated
report built from what the bucket holds.

The manifest is built here as data (not from a template): JobSet `jobset.x-k8s.io/v1alpha2`, one
replicated Job whose parallelism and completions are the topology's hosts (4 chips a host), GKE's TPU
node selectors, the placement policy a multi-host slice needs, and Kueue's queue and priority labels.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelbench.errors import UserError, visible

CHIPS_PER_HOST = 4
CORES_PER_CHIP = 2  # the placement policy names cores
TOPOLOGY = re.compile(r"(?<!\d)(\d+x\d+x\d+)(?!\d)")
DEFAULT_TOPOLOGY = "2x2x1"
TERMINAL = ("Completed", "Failed")


def _option(default: Any, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class Cluster:
    """Where and how the suite's JobSets run: each field is a `tpums suite submit --FIELD` option."""

    bucket: str = _option("", "where results go: <bucket>/<suite>/<config>/ (gs://..., required)")
    namespace: str = _option("default", "the Kubernetes namespace")
    queue: str = _option("multislice-queue", "Kueue's local queue")
    priority: str = _option("medium", "Kueue's workload priority class")
    image: str = _option(
        "us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu:latest", "the container image"
    )
    accelerator: str = _option("tpu7x", "GKE's TPU accelerator label")
    timeout_min: int = _option(30, "Kueue's declared duration, and how long submit waits (minutes)")
    install: str = _option(
        "'accelbench[tpu]'", "what pip installs in the pod (a wheel URL, a git+https URL)"
    )


def topology_of(config: str) -> str:
    """The slice a config is for, from its path (configs/tpums/tpu7x/2x2x2/...), as upstream infers it."""
    found = TOPOLOGY.search(config.lower())
    return found.group(1) if found else DEFAULT_TOPOLOGY


def hosts(topology: str) -> int:
    return max(1, math.prod(int(d) for d in topology.split("x")) // CHIPS_PER_HOST)


def workload_name(stem: str, topology: str) -> str:
    """A DNS-1123 JobSet name of at most 45 characters (JobSet adds its own suffixes), the topology
    in it once."""
    named = stem if topology in stem else f"{topology}-{stem}"
    base = re.sub(r"[^a-z0-9-]+", "-", f"tpums-{named}".lower().replace("tpums-tpums", "tpums"))
    return re.sub(r"-+", "-", base).strip("-")[:45].rstrip("-")


def command(config: str, results: str, install: str) -> str:
    """What each pod runs: this project installed, the config run straight into the bucket."""
    return (
        "set -e -o pipefail\n"
        f"pip install -q {install}\n"
        f"tpums benchmark run-config {config} --output_dir {results}\n"
    )


def _selector(cluster: Cluster, topology: str) -> dict[str, str]:
    """GKE's node selectors for the slice: its accelerator and topology, and past one host the
    placement policy that keeps its hosts together."""
    selector = {
        "cloud.google.com/gke-tpu-accelerator": cluster.accelerator,
        "cloud.google.com/gke-tpu-topology": topology,
    }
    if hosts(topology) > 1:
        cores = hosts(topology) * CHIPS_PER_HOST * CORES_PER_CHIP
        selector["cloud.google.com/placement-policy-name"] = (
            f"{cluster.accelerator}-{cores}-{topology}-placement-policy"
        )
    return selector


def _pod(config: str, results: str, cluster: Cluster, selector: dict[str, str]) -> dict[str, Any]:
    """The pod template of one host of the slice: this project run on the config, into the bucket."""
    return {
        "metadata": {"labels": {"declared-duration-minutes": str(cluster.timeout_min)}},
        "spec": {
            "restartPolicy": "Never",
            "hostNetwork": True,
            "dnsPolicy": "ClusterFirstWithHostNet",
            "nodeSelector": selector,
            "tolerations": [
                {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}
            ],
            "containers": [
                {
                    "name": "tpums",
                    "image": cluster.image,
                    "command": ["/bin/bash", "-c"],
                    "args": [command(config, results, cluster.install)],
                    "env": [{"name": "JAX_PLATFORMS", "value": "tpu"}],
                    "resources": {
                        "limits": {"google.com/tpu": CHIPS_PER_HOST},
                        "requests": {"google.com/tpu": CHIPS_PER_HOST},
                    },
                }
            ],
        },
    }


def jobset(config: str, stem: str, cluster: Cluster, suite: str) -> dict[str, Any]:
    """The JobSet that runs one config on its topology."""
    topology = topology_of(config)
    n = hosts(topology)
    results = f"{cluster.bucket.rstrip('/')}/{suite}/{stem}"
    pod = _pod(config, results, cluster, _selector(cluster, topology))
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": workload_name(stem, topology),
            "namespace": cluster.namespace,
            "labels": {
                "kueue.x-k8s.io/queue-name": cluster.queue,
                "kueue.x-k8s.io/priority-class": cluster.priority,
            },
            "annotations": {
                "alpha.jobset.sigs.k8s.io/exclusive-topology": "kubernetes.io/hostname"
                if n == 1
                else "cloud.google.com/gke-nodepool"
            },
        },
        "spec": {
            "failurePolicy": {"maxRestarts": 0},
            "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
            "replicatedJobs": [
                {
                    "name": "slice",
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "parallelism": n,
                            "completions": n,
                            "backoffLimit": 0,
                            "template": pod,
                        }
                    },
                }
            ],
        },
    }


def manifests(
    configs: list[tuple[str, str]], cluster: Cluster, suite: str, patterns: list[str],
    topologies: list[str],
) -> list[dict[str, Any]]:  # fmt: skip
    """Each selected config's JobSet (`patterns`: substrings of the path; `topologies`: slices)."""
    chosen = [
        (path, stem) for path, stem in configs
        if (not patterns or any(p.lower() in path.lower() for p in patterns))
        and (not topologies or topology_of(path) in topologies)
    ]  # fmt: skip
    if not chosen:
        raise UserError("no config of the suite matches --filter/--topologies", key="suite submit")
    return [jobset(path, stem, cluster, suite) for path, stem in chosen]


def _kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        raise UserError(
            "kubectl is not on PATH; --dry-run prints the manifests to apply elsewhere",
            key="suite submit",
        )
    return found


def submit(documents: list[dict[str, Any]], timeout_min: int) -> int:
    """kubectl apply each JobSet, then a live status line per JobSet until all end or time runs out;
    1 if any failed or did not end."""
    import yaml

    kubectl = _kubectl()
    for doc in documents:
        subprocess.run(
            [kubectl, "apply", "-f", "-"], input=yaml.safe_dump(doc), text=True, check=True
        )
    names = [(d["metadata"]["namespace"], d["metadata"]["name"]) for d in documents]
    deadline = time.monotonic() + timeout_min * 60
    while True:
        states = {name: _state(kubectl, namespace, name) for namespace, name in names}
        print(visible(" | ".join(f"{n}: {s}" for n, s in states.items())), file=sys.stderr)
        if all(s in TERMINAL for s in states.values()) or time.monotonic() > deadline:
            break
        time.sleep(15)
    return 0 if all(s == "Completed" for s in states.values()) else 1


def _state(kubectl: str, namespace: str, name: str) -> str:
    """A JobSet's condition: Completed, Failed, or Running (Pending where kubectl cannot tell)."""
    import json

    out = subprocess.run(
        [kubectl, "get", "jobset", name, "-n", namespace, "-o", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    if out.returncode:
        return "Pending"
    conditions = json.loads(out.stdout).get("status", {}).get("conditions", [])
    done = [c["type"] for c in conditions if c.get("status") == "True" and c["type"] in TERMINAL]
    return done[0] if done else "Running"


def _run_number(name: str) -> int:
    """summary.csv is run 1, summary.N.csv run N."""
    found = re.search(r"summary\.(\d+)\.csv$", name)
    return int(found.group(1)) if found else 1


def collected(path: str) -> dict[str, Any]:
    """Each config folder's latest summary.csv under a bucket path (gs://..., a local folder), read
    through fsspec: folder -> its table."""
    import fsspec
    import pandas as pd

    key = f"suite collect '{path}'"
    try:
        fs, root = fsspec.core.url_to_fs(path)
    except (ImportError, ValueError) as error:
        raise UserError(f"cannot read it: {error}", key=key) from None
    latest: dict[str, str] = {}
    for name in fs.glob(f"{root.rstrip('/')}/**/summary*.csv"):
        folder = str(Path(name).parent.name)
        if folder not in latest or _run_number(name) > _run_number(latest[folder]):
            latest[folder] = name
    if not latest:
        raise UserError("holds no summary.csv of a suite's run", key=key)
    tables = {}
    for folder, name in sorted(latest.items()):
        with fs.open(name, "r") as f:
            tables[folder] = pd.read_csv(f)
    return tables
