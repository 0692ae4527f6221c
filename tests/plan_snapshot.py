"""Every shipped config's plan, summed up per file: what `tests/test_shipped_plans.py` compares with
`tests/data/shipped_plans.json`, so a structural change that alters any case is seen: its id, label,
op, backend, implementation, parameters, every run setting, repeat, outputs, process environment,
the benchmark and fields a reference dialect writes, and what planning said on stderr. One-off
command lines (`run --run NAME --field value`) are planned too. Regenerate (only for an intended
change, said in the commit):
    python tests/plan_snapshot.py --write"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("configs", "Ironwood/configs", "tests/seed_examples", "tests/data")
LEFT_OUT = ("tests/data/tpums_versions",)  # the TPUMS history corpus: its own test
GOLDEN = ROOT / "tests" / "data" / "shipped_plans.json"
LAYOUT_NOTE = "(--strict-layout refuses it)"
DEVICES = 8  # what a mesh without a shape spans, fixed so the plan does not depend on the machine
# one-off command lines, (NAME, field arguments...), as `microbench run --run` takes them
ONE_OFFS: tuple[tuple[str, ...], ...] = (
    ("gemm_generalized", "--m", "4096", "--in_dtype", "bfloat16", "--transpose_b"),
    ("gemm_generalized", "--m=512", "--xprof_timing", "true", "--backend", "jax,torch"),
    ("hbm_bandwidth", "--op_type", "triad", "--size", "1048576"),
    ("all_reduce", "--matrix_dim", "2048", "--reduce_op", "max"),
    ("device_to_device", "--data_size_mib", "16"),
    ("swiglu", "--mode", "bwd", "--batch", "128"),
    ("transformer_layer_moe", "--mslen", "64"),
    ("attention_flashed", "--seq_len", "1024", "--conditions", "strict"),
    ("gemm", "--m", "256", "--k", "512", "--n", "128", "--num_runs", "5"),
    ("add", "--m", "1024", "--n", "1024", "--backend", "jax"),
    ("host_device", "--data_size_mib", "8"),
    ("rmsnorm_fwd", "--m", "64", "--n", "256", "--cache", "warm"),
)


def shipped_configs() -> list[str]:
    return sorted(
        str(p.relative_to(ROOT))
        for d in FOLDERS
        for p in (ROOT / d).rglob("*.y*ml")
        if p.is_file() and not str(p.relative_to(ROOT)).startswith(LEFT_OUT)
    )


def _records(loaded: Any, cases: list[Any]) -> list[dict[str, Any]]:
    from accelbench.config.dialects import get_dialect
    from accelbench.run.listing import CaseRecord

    out = []
    own = get_dialect(loaded.dialect).case_fields
    records = [CaseRecord.of(c, own) for c in cases]
    for case, record in zip(cases, records, strict=True):
        o = case.outputs
        out.append(
            {
                **asdict(record),
                "outputs": [Path(o.csv_path).name, o.trace_dir, o.xla_dump_dir, o.xlml_metrics_dir],
                "process_env": [list(p) for p in case.process_env],
                "pair_key": case.pair_key,
            }
        )
    return out


def _summed(plan: Any) -> dict[str, object]:
    """The number of cases and a digest of every case's record in order (and of what planning
    printed), or the one-line error the plan gives."""
    from accelbench.errors import UserError

    said = io.StringIO()
    _once_a_process_forgotten()
    try:
        with contextlib.redirect_stderr(said):
            loaded, cases = plan()
    except UserError as error:
        return {"error": str(error).replace(str(ROOT) + "/", "")}
    records = _records(loaded, cases)
    printed = "".join(
        line  # the notes issue 62 added for older TPUMS layouts are new by intent
        for line in said.getvalue().replace(str(ROOT) + "/", "").splitlines(keepends=True)
        if LAYOUT_NOTE not in line
    )
    blob = json.dumps([records, printed], default=str)
    digest = hashlib.sha1(blob.encode()).hexdigest()[:16]
    first = [records[0]["case_id"], records[0]["label"]] if records else None
    return {"cases": len(cases), "digest": digest, "first": first}


def _once_a_process_forgotten() -> None:
    """What a dialect says once a process (torchao's alias notes) is said again for each plan, so
    each digest holds it whatever was planned before."""
    from accelbench.dialects.torchao import plan

    getattr(plan, "_NOTED", set()).clear()


def summary(path: str) -> dict[str, object]:
    from accelbench.config.loader import load_config
    from accelbench.config.planner import plan
    from accelbench.core.options import RunOptions

    def planned() -> tuple[Any, list[Any]]:
        loaded = load_config(ROOT / path)
        return loaded, plan(loaded, RunOptions(max_cases=100_000), lambda: DEVICES)

    return _summed(planned)


def one_off(argv: tuple[str, ...]) -> dict[str, object]:
    from accelbench.core.options import RunOptions
    from accelbench.run import planning

    def planned() -> tuple[Any, list[Any]]:
        with mock.patch.object(planning, "jax_device_count", lambda: DEVICES):
            return planning.load_and_plan("", RunOptions(one_off=argv, max_cases=100_000))

    return _summed(planned)


def snapshot() -> dict[str, dict[str, object]]:
    files = {path: summary(path) for path in shipped_configs()}
    return {**files, **{"--run " + " ".join(argv): one_off(argv) for argv in ONE_OFFS}}


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    data = snapshot()
    if "--write" in sys.argv:
        GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    else:
        json.dump(data, sys.stdout, indent=1, sort_keys=True)
