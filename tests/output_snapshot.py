"""What every shipped config's cases write, summed up per file: a few cases of each are given the same
made-up measurement on a TPU7x and on an H100, and every output the run would open (the results files,
a reference dialect's summary.csv and detailed.json, the Ironwood metrics report, torchao's CSV)
is written and read back. `tests/test_shipped_outputs.py` compares the digests with
`tests/data/shipped_outputs.json`, so a structural change that alters any column, value or order of
any output is seen. Regenerate (only for an intended change, said in the commit):
    python tests/output_snapshot.py --write"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import sys
import tempfile
from dataclasses import MISSING, fields, replace
from pathlib import Path
from typing import Any
from unittest import mock

import plan_snapshot

ROOT = plan_snapshot.ROOT
GOLDEN = ROOT / "tests" / "data" / "shipped_outputs.json"
PER_CONFIG = 3  # cases written per config: the first, one from the middle, the last
DEVICES = (("TPU7x", "tpu"), ("NVIDIA H100 80GB HBM3", "gpu"))
STARTED = 1_800_000_000.0  # when every made-up loop began (seconds since the epoch)
# what differs between machines and runs, not between plans: left out of the digest
VOLATILE = re.compile(
    r"(version|hostname|host_load|timestamp|run_id|started_at|python|git_|load_ratio|"
    r"results_path|config_path|cpu_model|command|_at$)"
)


def _timing(case_index: int) -> Any:
    from accelbench.core.types import Timing

    base = 1e-3 * (1 + case_index % 5)
    samples = [base * (1 + 0.01 * i) for i in range(12)]
    return Timing(
        samples_s=samples,
        source="xprof_tpu",
        wall_samples_s=[s * 1.1 for s in samples],
        span_samples_s=[s * 0.95 for s in samples],
        loop_started_at=STARTED,
        loop_s=sum(samples) * 1.2,
    )


def _extras(spec: Any, device_count: int) -> Any:
    """The op's extras: every field its default, else a made-up value of its type (a count of
    devices: all of them)."""
    if spec.row_extras is None:
        return None
    given: dict[str, Any] = {}
    for f in fields(spec.row_extras):
        if f.default is not MISSING or f.default_factory is not MISSING:
            continue
        kind = str(f.type)
        if f.name.endswith("device_count"):
            given[f.name] = device_count
        elif kind.startswith("int"):
            given[f.name] = 2
        elif kind.startswith("float"):
            given[f.name] = 0.5
        elif kind.startswith("bool"):
            given[f.name] = True
        else:
            given[f.name] = None
    return spec.row_extras(**given)


def _rows(cases: list[Any], kind: str, platform: str) -> list[tuple[Any, Any]]:
    from accelbench.catalogue import get_spec
    from accelbench.core.types import CheckResult, DeviceInfo, Measurement
    from accelbench.results.row_builder import success_row

    device = DeviceInfo(kind, 8, platform, "jax", "0")
    out = []
    for i, case in enumerate(cases):
        spec = get_spec(case.op)
        m = Measurement(
            _timing(i), device, CheckResult("strict", "passed"), extras=_extras(spec, 8)
        )
        out.append((case, success_row(case, spec, m, "r", {}, None)))
    return out


def _picked(cases: list[Any]) -> list[Any]:
    if len(cases) <= PER_CONFIG:
        return cases
    return [cases[0], cases[len(cases) // 2], cases[-1]]


def _written(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): _steady(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _steady(path: Path) -> str:
    """The file without what differs between machines and runs (versions, times, the host's load)."""
    text = path.read_text(errors="replace")
    if path.suffix == ".json":
        return json.dumps(_steady_json(json.loads(text)), default=str)
    if path.suffix == ".jsonl":
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        return "\n".join(json.dumps(_steady_json(line), default=str) for line in lines)
    if path.suffix == ".csv":
        import csv

        rows = list(csv.reader(io.StringIO(text)))
        keep = [i for i, h in enumerate(rows[0] if rows else []) if not VOLATILE.search(h)]
        return "\n".join(",".join(r[i] for i in keep if i < len(r)) for r in rows)
    return text


def _steady_json(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _steady_json(v) for k, v in data.items() if not VOLATILE.search(str(k))}
    if isinstance(data, list):
        return [_steady_json(v) for v in data]
    return data


def summary(path: str) -> dict[str, object]:
    from accelbench.config.loader import load_config
    from accelbench.config.planner import plan
    from accelbench.core.options import RunOptions
    from accelbench.errors import UserError
    from accelbench.results.sinks import RunContext, open_sinks

    digests: dict[str, str] = {}
    folder = Path("results")  # relative: no path of this machine enters a case
    options = RunOptions(max_cases=100_000, output_dir=str(folder))
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            loaded = load_config(ROOT / path)
            planned = plan(loaded, options, lambda: plan_snapshot.DEVICES)
        except UserError:
            return {"error": "plans no case"}
        cases = [_local(c, folder) for c in _picked(planned)]
        for kind, platform in DEVICES:
            with tempfile.TemporaryDirectory() as tmp, _inside(tmp):
                context = RunContext(options, tuple(cases))
                sinks = open_sinks(context)
                rows = _rows(cases, kind, platform)
                for case, row in rows:
                    for sink in sinks:
                        sink.row(case, row)
                for sink in sinks:
                    sink.close([r for _, r in rows], False)
                written = _written(Path(tmp))
                blob = json.dumps(written, sort_keys=True)
                digests[kind] = hashlib.sha1(blob.encode()).hexdigest()[:16]
                digests[kind + " files"] = ",".join(sorted(written))
    return digests


@contextlib.contextmanager
def _inside(folder: str) -> Any:
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _local(case: Any, folder: Path) -> Any:
    """The case writing under `folder` (a config's own csv_path, trace and metrics folders too)."""
    o = case.outputs
    moved = {
        name: str(folder / Path(getattr(o, name)).name)
        for name in ("csv_path", "xlml_metrics_dir")
        if getattr(o, name)
    }
    return replace(case, outputs=replace(o, **moved))


def snapshot() -> dict[str, dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "LIBTPU_INIT_ARGS")}
    with mock.patch.dict(os.environ, env, clear=True):
        return {path: summary(path) for path in plan_snapshot.shipped_configs()}


if __name__ == "__main__":
    os.chdir(ROOT)
    data = snapshot()
    if "--write" in sys.argv:
        GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    else:
        json.dump(data, sys.stdout, indent=1, sort_keys=True)
