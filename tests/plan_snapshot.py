"""Every shipped config's plan, summed up per file: what `tests/test_shipped_plans.py` compares with
`tests/data/shipped_plans.json`, so a structural change that alters any case's id, label, order or
output file is seen. Regenerate (only for an intended change, said in the commit):
    python tests/plan_snapshot.py --write"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("configs", "Ironwood/configs", "tests/seed_examples")
GOLDEN = ROOT / "tests" / "data" / "shipped_plans.json"
DEVICES = 8  # what a mesh without a shape spans, fixed so the plan does not depend on the machine


def shipped_configs() -> list[str]:
    return sorted(
        str(p.relative_to(ROOT)) for d in FOLDERS for p in (ROOT / d).rglob("*.y*ml") if p.is_file()
    )


def summary(path: str) -> dict[str, object]:
    """The number of cases and a digest of (id, label, op, backend, benchmark, csv file) in order,
    or the one-line error the file gives."""
    from accelbench.config.loader import load_config
    from accelbench.config.planner import plan
    from accelbench.core.options import RunOptions
    from accelbench.errors import UserError

    try:
        cases = plan(load_config(ROOT / path), RunOptions(max_cases=100_000), lambda: DEVICES)
    except UserError as error:
        return {"error": str(error).replace(str(ROOT) + "/", "")}
    rows = [
        [c.id, c.label, c.op, c.backend, c.benchmark, Path(c.outputs.csv_path).name] for c in cases
    ]
    digest = hashlib.sha1(json.dumps(rows).encode()).hexdigest()[:16]
    return {"cases": len(cases), "digest": digest, "first": rows[0][:2] if rows else None}


def snapshot() -> dict[str, dict[str, object]]:
    return {path: summary(path) for path in shipped_configs()}


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    data = snapshot()
    if "--write" in sys.argv:
        GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    else:
        json.dump(data, sys.stdout, indent=1, sort_keys=True)
