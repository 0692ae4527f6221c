"""A history of real rows with a real step: a git repository of a kernel (scaling 256 MB of fp32 on a
GPU: bound by memory, whose clock does not follow power as the SM clock does; a bf16 matmul's runs
spread 15% on an unlocked H100) whose commit 12 of 20 adds a pass over 4% of the output; the
kernel is timed with bench() at every commit but 10 and 11 (a nightly that skipped two), each run saved
into one store that records the kernel repository's commit; then `history` (JSON, and --bisect over
the repository) and `report` over the store. `--cpu`: the same pipeline with NumPy on a CPU, the slow
commits doing the matmul twice (a step the host's noise cannot hide). Not a test.

    python bench/history_gpu.py OUT_DIR [--cpu]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

COMMITS, SLOW_FROM, SKIPPED = 20, 12, (10, 11)
KERNELS = {  # framework: (the arguments, the kernel before the step, after it)
    "torch": (
        "import torch\na = torch.randn(64 * 2**20, device='cuda')\nb = 2.0",
        "def kernel(a, b):\n    return a * b\n",
        "def kernel(a, b):\n    out = a * b\n    out[: a.numel() // 25].add_(1.0)  # 4% more\n    return out\n",
    ),
    "numpy": (
        "import numpy as np\na = np.random.default_rng(0).random((256, 256))\nb = a.copy()",
        "def kernel(a, b):\n    return a @ b\n",
        "def kernel(a, b):\n    return (a @ b) @ b  # twice the work\n",
    ),
}
MEASURE = """{args}
import accelbench, kernel
r = accelbench.bench(kernel.kernel, a, b, name="kernel", num_runs=200)
print(r)
accelbench.save([r], {store!r})
"""


def git(repo: str, *args: str, date: str = "") -> str:
    env = {**os.environ, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date} if date else None
    return subprocess.run(
        ["git", "-C", repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args],
        check=True, capture_output=True, text=True, env=env,
    ).stdout.strip()  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    setup, fast, slow = KERNELS["numpy" if args.cpu else "torch"]
    repo, store = os.path.join(args.out, "kernel_repo"), os.path.join(args.out, "store")
    os.makedirs(repo, exist_ok=True)
    git(repo, "init", "-q")
    cli = [sys.executable, "-m", "accelbench"]
    for i in range(COMMITS):
        with open(os.path.join(repo, "kernel.py"), "w") as f:
            f.write(f"# revision {i}\n" + (slow if i >= SLOW_FROM else fast))
        git(repo, "add", "kernel.py")
        git(repo, "commit", "-q", "-m", f"revision {i}", date=f"2026-11-{i + 1:02d}T12:00:00+00:00")
        if i not in SKIPPED:
            code = MEASURE.format(args=setup, store=os.path.join(store, "k.csv"))
            subprocess.run([sys.executable, "-c", code], cwd=repo, check=True)
    history = subprocess.run(
        [*cli, "history", "--results-dir", store, "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    with open(os.path.join(args.out, "history.json"), "w") as f:
        f.write(history.stdout)
    for extra in (["--bisect", "--repo", repo], ["--format", "markdown"]):
        subprocess.run([*cli, "history", "--results-dir", store, *extra], check=True)
    subprocess.run(
        [*cli, "report", store, "--output-dir", os.path.join(args.out, "report")], check=True
    )
    print(
        f"the step went in at {git(repo, 'rev-parse', '--short=12', f'HEAD~{COMMITS - 1 - SLOW_FROM}')}"
    )


if __name__ == "__main__":
    main()
