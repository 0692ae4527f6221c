"""Issue 53's start-up table (not a test): each command a fresh process, several times, medians; a
compiled one-off beside a bare torch.compile script, the eager and JAX one-offs, and a 64-case compiled
sweep with Inductor's pool of compile workers and in process.

    python bench/startup_compile.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

PY = sys.executable
BARE = (
    "import torch\n"
    "f = torch.compile(lambda x, y: x + y)\n"
    "x = torch.randn(1024, 1024, device='cuda')\n"
    "f(x, x); torch.cuda.synchronize()\n"
)
ONE_OFF = [PY, "-m", "accelbench", "run", "--run", "add", "--m", "1024", "--n", "1024", "-q"]
SWEEP = """backend: torch
implementation: compile
num_runs: 20
benchmarks:
- benchmark_name: add
  benchmark_sweep_params: [{m: [256, 512, 768, 1024, 1280, 1536, 1792, 2048],
                            n: [256, 512, 768, 1024, 1280, 1536, 1792, 2048]}]
"""


def wall(cmd: list[str], env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode not in (0, 3):
        print(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-800:]}", file=sys.stderr)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    n = parser.parse_args().repeat
    base = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_COMPILE_THREADS"}
    pool = {**base, "TORCHINDUCTOR_COMPILE_THREADS": str(os.cpu_count() or 8)}
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "bare.py"), "w") as f:
            f.write(BARE)
        with open(os.path.join(work, "sweep.yaml"), "w") as f:
            f.write(SWEEP)
        rows = [
            ("import torch, torch._dynamo, torch._inductor.compile_fx",
             [PY, "-c", "import torch, torch._dynamo, torch._inductor.compile_fx"], base, n),
            ("a bare script: torch.compile(lambda x, y: x + y), 1024², one call",
             [PY, "bare.py"], base, n),
            ("compiled one-off (the harness decides: in process)",
             [*ONE_OFF, "--backend", "torch", "--implementation", "compile", "--num-runs", "20"], base, n),
            ("compiled one-off, Inductor's pool forced (TORCHINDUCTOR_COMPILE_THREADS=ncpu)",
             [*ONE_OFF, "--backend", "torch", "--implementation", "compile", "--num-runs", "20"], pool, n),
            ("eager one-off", [*ONE_OFF, "--backend", "torch", "--implementation", "eager"], base, n),
            ("JAX one-off", [*ONE_OFF, "--backend", "jax"], base, n),
            ("64-case compiled sweep (the harness decides: the pool)",
             [PY, "-m", "accelbench", "run", "--config", "sweep.yaml", "-q"], base, 1),
            ("64-case compiled sweep, in process (TORCHINDUCTOR_COMPILE_THREADS=1)",
             [PY, "-m", "accelbench", "run", "--config", "sweep.yaml", "-q", "--overwrite"],
             {**base, "TORCHINDUCTOR_COMPILE_THREADS": "1"}, 1),
        ]  # fmt: skip
        print("| command | walls (s) | median (s) |\n|---|---|---|")
        for name, cmd, env, times in rows:
            walls = [wall(cmd, env, work) for _ in range(times)]
            shown = ", ".join(f"{w:.1f}" for w in walls)
            print(f"| {name} | {shown} | {statistics.median(walls):.1f} |", flush=True)


if __name__ == "__main__":
    main()
