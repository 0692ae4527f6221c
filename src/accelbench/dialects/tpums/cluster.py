"""A suite's JobSets (`tpums suite submit`) as data: the submit options, a run's names (a run id that
its JobSets and `<bucket>/<suite>/<run id>/` carry), the pod. The pod's script is one fixed text: every
value reaches it as an environment variable, only ever quoted, so no name is read as shell."""

from __future__ import annotations

import hashlib
import math
import os
import re
import secrets
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Any

from accelbench.dialects.tpums.collect import JOB_FOLDER
from accelbench.errors import UserError
from accelbench.names import portable_name
from accelbench.platform.environment import COMMIT
from accelbench.run.command_line import count

CHIPS_PER_HOST = 4
TOPOLOGY = re.compile(r"(?<!\d)(\d+x\d+x\d+)(?!\d)")
DEFAULT_TOPOLOGY = "2x2x1"
DEFAULT_IMAGE = "us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu:latest"
JOB = "slice"  # the replicated Job's name
POD_SUFFIX = "-abcde"  # the random tail Kubernetes gives a pod, as JobSet's webhook counts it
RUN_LABEL = "accelbench/run-id"
LABEL_VALUE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
GCP_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
BUCKET = re.compile(r"(gs://[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]|file://(?=/))(/[^\x00-\x1f\x7f]*)?")
MINUTES = 7 * 24 * 60  # the longest wait a submission may declare


def _named(pattern: re.Pattern[str], what: str) -> Callable[[str], str | None]:
    return lambda v: None if pattern.fullmatch(v) and len(v) <= 63 else f"not {what}"


_label = _named(LABEL_VALUE, "a label value")


def _gcp(what: str) -> Callable[[str], str | None]:
    return _named(GCP_NAME, what)


def _bucket(url: str) -> str | None:
    if not BUCKET.fullmatch(url):
        return "must be gs://BUCKET[/PREFIX] (file:///PATH for a local try)"
    parts = url.split("://", 1)[1].split("/")
    return "a '.' or '..' in a bucket path" if {".", ".."} & set(parts) else None


def _text(value: str) -> str | None:
    return "is empty" if not value.strip() else None


def _option(
    default: Any, doc: str, check: Callable[[Any], str | None] | None = None, **more: Any
) -> Any:
    """A submit option; `check` gives why a value is refused; `flag`, `shown`: its spelling, default."""
    return field(default=default, metadata={"doc": doc, "check": check, **more})


@dataclass(frozen=True)
class Cluster:
    """Where and how a suite's JobSets run: each field a `suite submit` option, checked first."""

    bucket: str = _option(
        "", "where results go: <bucket>/<suite>/<run id>/<config>/", _bucket, required=True,
        shown="required",
    )  # fmt: skip
    namespace: str = _option("default", "the Kubernetes namespace", _named(DNS_LABEL, "a name"))
    queue: str = _option("multislice-queue", "Kueue's local queue (its queue-name label)", _label)
    priority: str = _option("medium", "Kueue's workload priority class (its label)", _label)
    image: str | None = _option(
        None, "the container image, holding this project: nothing is installed", _text,
        shown=f"{DEFAULT_IMAGE}, this checkout's wheel installed",
    )  # fmt: skip
    install: str | None = _option(
        None, "what pip installs in each pod: a pinned requirement or a URL", _text,
        shown="this checkout's wheel, built and sent with the run",
    )  # fmt: skip
    accelerator: str = _option(
        "tpu7x", "the cloud.google.com/gke-tpu-accelerator node label", _label
    )
    reservation: str = _option("", "the cloud.google.com/reservation-name node label", _label)
    placement_policy: str = _option(
        "", "the cloud.google.com/placement-policy-name node label", _label
    )
    declared_duration_minutes: int = _option(
        30, "each pod's declared-duration-minutes label, and how long submit waits",
        parse=count(1, MINUTES),
    )  # fmt: skip
    poll_interval: int = _option(60, "seconds between status lines", parse=count(1, 3600))
    cleanup: bool = _option(
        True, "delete each JobSet once it ends", shown="on; --no-cleanup keeps them"
    )
    cluster: str = _option("", "a GKE cluster: its credentials fetched first", _gcp("a name"))
    project: str = _option("", "the cluster's Google Cloud project", _gcp("a project id"))
    region: str = _option("", "the cluster's region", _gcp("a region"))
    zone: str = _option("", "the cluster's zone (where it has no region)", _gcp("a zone"))
    xla_flags_file_path: str = _option(
        "", "a YAML of per-benchmark TPU flags, sent with the run", flag="--xla_flags_file_path"
    )


def spelling(option: Any) -> str:
    return str(option.metadata.get("flag") or f"--{option.name.replace('_', '-')}")


def checked(cluster: Cluster) -> Cluster:
    for f in fields(cluster):
        value, check = getattr(cluster, f.name), f.metadata["check"]
        if value == f.default and not f.default and not f.metadata.get("required"):
            continue  # not given
        why = check(value) if check else None
        if why:
            raise UserError(f"{why}: {str(value)[:80]!r}", key=spelling(f))
    where = (cluster.cluster, cluster.project, cluster.region or cluster.zone)
    if any(where) and not all(where):
        raise UserError("--cluster, --project and --region or --zone go together", key="--cluster")
    return cluster


@dataclass(frozen=True)
class Entry:
    config: str
    located: str
    folder: str
    topology: str
    name: str = ""


@dataclass(frozen=True)
class Run:
    run_id: str
    root: str
    install: str  # a pip requirement (the job folder's wheel, or --install), or "" for --image
    commit: str = ""


def new_run_id() -> str:
    """UTC date-time and four random hex digits: sortable, shared only within a second, 1 in 65,536."""
    return f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def distinct(names: Sequence[str], keys: Sequence[str], limit: int) -> list[str]:
    """Each name cut to `limit`, with a short hash of its key where two would meet (compared without
    case, as a case-blind file system and DNS compare them): distinct keys never share a name."""
    cut = [n[:limit].rstrip("-") for n in names]
    seen = Counter(n.lower() for n in cut)
    out = [
        n if seen[n.lower()] == 1 else f"{n[: limit - 7].rstrip('-')}-{_digest(k)}".lstrip("-")
        for n, k in zip(cut, keys, strict=True)
    ]
    if len({n.lower() for n in out}) < len(out):  # a hash meeting a readable name: not in practice
        raise UserError("two configs would share one name; rename one", key="configs")
    return out


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:6]


def dns_label(text: str) -> str:
    """Text as an RFC 1123 label's characters (`portable_name` first, as every name from a file)."""
    return re.sub(r"[^a-z0-9]+", "-", portable_name(text).lower()).strip("-") or "config"


def jobset_names(entries: Sequence[Entry], run_id: str) -> list[str]:
    """`tpums-<slice and config>-<run id>`, short enough that JobSet's longest pod name
    (`<name>-slice-0-<last host>-abcde`) stays within 63 characters."""
    most = max(hosts(e.topology) for e in entries)
    limit = 63 - len(f"tpums--{run_id}-{JOB}-0-{most - 1}{POD_SUFFIX}")
    readable = [dns_label("-".join(e.folder.split("/")[-2:])) for e in entries]
    return [f"tpums-{r}-{run_id}" for r in distinct(readable, [e.folder for e in entries], limit)]


def topology_of(config: str) -> str:
    """The slice a config is for, from its path (configs/tpums/tpu7x/2x2x2/...), as upstream infers it."""
    found = TOPOLOGY.search(config.lower())
    return found.group(1) if found else DEFAULT_TOPOLOGY


def hosts(topology: str) -> int:
    return max(1, math.prod(int(d) for d in topology.split("x")) // CHIPS_PER_HOST)


# What every pod runs, values from its environment only. `sync` copies a folder's contents: gs:// through
# the image's gcloud, file:// (a local try) with cp. The first line printed is the project's version and
# commit, also kept in the results; only the first host uploads them.
SCRIPT = r"""set -eu -o pipefail
sync() { case "$1 $2" in
  *gs://*) gcloud storage rsync --recursive "$1" "$2" ;;
  *) mkdir -p "${2#file://}" && cp -R "${1#file://}/." "${2#file://}/" ;;
esac; }
quiet() { "$@" > "$work/log" 2>&1 || { cat "$work/log" >&2; return 1; }; }
work=$(mktemp -d) && cd "$work" && mkdir results job
quiet sync "$ACCELBENCH_JOB" "$work/job"
if [ -n "$ACCELBENCH_INSTALL" ]; then (cd job && quiet python -m pip install "$ACCELBENCH_INSTALL"); fi
accelbench --version | tee results/version.txt
flags=(); if [ -f job/xla_flags.yaml ]; then flags=(--xla_flags_file_path "$work/job/xla_flags.yaml"); fi
code=0
tpums benchmark run-config "$work/job/$ACCELBENCH_CONFIG" --output_dir "$work/results" \
  --xprof_dir "$work/xprof" "${flags[@]}" || code=$?
if [ "${JOB_COMPLETION_INDEX:-0}" = 0 ]; then sync "$work/results" "$ACCELBENCH_RESULTS"; fi
exit "$code"
"""


def config_in_job(entry: Entry) -> str:
    return f"configs/{entry.folder}/{portable_name(os.path.basename(entry.located))}"


def _pod(entry: Entry, cluster: Cluster, run: Run) -> dict[str, Any]:
    """The pod template of one host of the slice."""
    env = {
        "ACCELBENCH_JOB": f"{run.root}/{JOB_FOLDER}",
        "ACCELBENCH_CONFIG": config_in_job(entry),
        "ACCELBENCH_RESULTS": f"{run.root}/{entry.folder}",
        "ACCELBENCH_INSTALL": run.install,
        COMMIT: run.commit,
        "JAX_PLATFORMS": "tpu",
    }
    selector = {  # GKE's node labels; the reservation and placement policy only where given
        "cloud.google.com/gke-tpu-accelerator": cluster.accelerator,
        "cloud.google.com/gke-tpu-topology": entry.topology,
        "cloud.google.com/reservation-name": cluster.reservation,
        "cloud.google.com/placement-policy-name": cluster.placement_policy,
    }
    tolerate = [
        "google.com/tpu",
        *(["cloud.google.com/reservation-name"] * bool(cluster.reservation)),
    ]
    return {
        "metadata": {
            "labels": {"declared-duration-minutes": str(cluster.declared_duration_minutes)}
        },
        "spec": {
            "restartPolicy": "Never",
            "hostNetwork": True,
            "dnsPolicy": "ClusterFirstWithHostNet",
            "nodeSelector": {k: v for k, v in selector.items() if v},
            "tolerations": [
                {"key": key, "operator": "Exists", "effect": "NoSchedule"} for key in tolerate
            ],
            "containers": [
                {
                    "name": "tpums",
                    "image": cluster.image or DEFAULT_IMAGE,
                    "command": ["/bin/bash", "-c", SCRIPT],
                    "env": [{"name": k, "value": v} for k, v in env.items()],
                    "resources": {
                        "limits": {"google.com/tpu": CHIPS_PER_HOST},
                        "requests": {"google.com/tpu": CHIPS_PER_HOST},
                    },
                }
            ],
        },
    }


def jobset(entry: Entry, cluster: Cluster, run: Run) -> dict[str, Any]:
    """The JobSet that runs one config on its slice."""
    n = hosts(entry.topology)
    exclusive = "kubernetes.io/hostname" if n == 1 else "cloud.google.com/gke-nodepool"
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": entry.name,
            "namespace": cluster.namespace,
            "labels": {
                "kueue.x-k8s.io/queue-name": cluster.queue,
                "kueue.x-k8s.io/priority-class": cluster.priority,
                RUN_LABEL: run.run_id,
            },
            "annotations": {
                "alpha.jobset.sigs.k8s.io/exclusive-topology": exclusive,
                "accelbench/config": entry.config,
            },
        },
        "spec": {
            "failurePolicy": {"maxRestarts": 0},
            "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
            "replicatedJobs": [
                {
                    "name": JOB,
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "parallelism": n,
                            "completions": n,
                            "completionMode": "Indexed",
                            "backoffLimit": 0,
                            "template": _pod(entry, cluster, run),
                        }
                    },
                }
            ],
        },
    }


def chosen(entries: list[Entry], patterns: list[str], topologies: list[str]) -> list[Entry]:
    """The configs `--filter` (substrings of the path) and `--topologies` select."""
    out = [
        e for e in entries
        if (not patterns or any(p.lower() in e.config.lower() for p in patterns))
        and (not topologies or e.topology in topologies)
    ]  # fmt: skip
    if not out:
        raise UserError("no config of the suite matches --filter/--topologies", key="suite submit")
    return out
