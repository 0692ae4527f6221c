"""Issue 59 on a GPU: `ab` of two kernels 3% apart beside `compare` of two separately taken runs.

The kernels are PyTorch bf16 adds of N and 1.03 N elements (memory-bound: the time follows the bytes, so
the second takes about 3% longer). `ab` times them in alternating rounds in one process; the separate
runs time each in its own process and save it to the run store, and `microbench compare` reads them.
An A/A pair of each says what "no change" reads as. The threshold is 1%, under the 3% to be found.

    python bench/ab_gpu.py ab                  # ab: 3% apart, and A/A
    python bench/ab_gpu.py one base|plus3 OUT  # one kernel timed in this process, saved to OUT
"""

from __future__ import annotations

import os
import sys

import accelbench

N = int(os.environ.get("AB59_ELEMENTS", 32 * 2**20))  # 64 MiB per bf16 operand (a CPU try: fewer)
PLUS = int(N * 1.03)  # 3% more elements: about 3% more time for a memory-bound add
THRESHOLD = 0.01


def kernels():  # noqa: ANN201 (torch is imported only where it runs)
    """base adds the first N elements of x, plus3 all 1.03 N of them: one input for both."""
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"  # a CPU run only tries the script
    x = torch.randn(PLUS, device=device, dtype=torch.bfloat16)
    return {
        "base": lambda a: torch.add(a[:N], a[:N]),
        "plus3": lambda a: torch.add(a, a),
    }, x


def ab() -> None:
    fns, x = kernels()
    for label, g in (("3% apart", fns["plus3"]), ("A/A", fns["base"])):
        r = accelbench.ab(fns["base"], g, x, threshold=THRESHOLD, cache="warm", name="add")
        interval = "none" if r.interval is None else f"{r.interval[0]:.4f}-{r.interval[1]:.4f}"
        print(
            f"## ab, {label}: {r.verdict}; paired ratio {r.ratio:.4f} ({interval}), {r.rounds} rounds"
        )
        print(r)


def one(name: str, out: str) -> None:
    fns, x = kernels()
    r = accelbench.bench(fns[name], x, name="add", cache="warm")
    print(r)
    print(accelbench.save([r], out))


if __name__ == "__main__":
    if sys.argv[1] == "ab":
        ab()
    else:
        one(sys.argv[2], sys.argv[3])
