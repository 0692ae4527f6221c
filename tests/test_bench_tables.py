"""The bench/ table scripts still read the committed GPU results: docs/ quotes their tables, and a
change to the row types once broke six of them unnoticed until the next GPU run."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = "docs/data"
SMOKE = f"{DATA}/h100_stop67_smoke"

# script and arguments, and a cell every table of that file must hold
TABLES = {
    "parity": (["parity_table.py", f"{SMOKE}/gpu_parity.csv"], "| gemm_simple |"),
    "summarize": (["summarize.py", f"{SMOKE}/gpu_parity.csv"], "gemm_simple | torch"),
    "fusion": (["fusion_table.py", f"{SMOKE}/units.csv"], "| Linear_Bias |"),
    "elementwise": (
        ["elementwise_table.py", f"{DATA}/h200_elementwise.csv", f"{DATA}/copy.json"],
        "| cross_entropy |",
    ),
    "torchao": (["torchao_table.py", f"{SMOKE}/units_ao.csv"], "| float8dq-row |"),
    "torchao_today": (
        ["torchao_table.py", f"{DATA}/h100_issue49/today49.csv"],
        "| float8_rowwise |",
    ),
    "ironwood": (
        [
            "ironwood_table.py",
            f"{DATA}/h200_ironwood_gemms.csv",
            f"{DATA}/h200_ironwood_memory.csv",
        ],
        "| inference_rmsnorm |",
    ),
    "ironwood_system": (
        [
            "ironwood_system_table.py",
            f"{DATA}/h200_ironwood_transfers.csv",
            f"{DATA}/h200_ironwood_throttling.csv",
        ],
        "| data_gen_once_noblock |",
    ),
    "tpums": (
        ["tpums_table.py", f"{DATA}/conditions_h100/upstream_gemm_generalized.summary.csv"],
        "| 2048 |",
    ),
    "throttle": (
        [
            "throttle_table.py",
            "cost",
            f"{DATA}/h100_issue50/cost_off_1.csv",
            "--",
            f"{DATA}/h100_issue50/cost_flag_1.csv",
        ],
        "| gemm-torch-4096x4096x4096 |",
    ),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_table_script_reads_the_committed_results(name: str) -> None:
    args, cell = TABLES[name]
    done = subprocess.run(
        [sys.executable, f"bench/{args[0]}", *args[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert cell in done.stdout
    assert "| None |" not in done.stdout  # rows of another suite are left out, not printed empty
