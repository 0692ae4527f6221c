"""torchao's entry point, kept for its users: python -m torch_backend.benchmark_runner --config FILE
is `microbench run --config FILE` (every `run` option works)."""

import sys

from accelbench.cli import entry

if __name__ == "__main__":
    entry(["run", *sys.argv[1:]])
