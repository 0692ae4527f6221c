"""torchao's entry point, kept for its users: python -m torch_backend.benchmark_runner --config FILE.

Same as `microbench run --config FILE` (every `run` option works).
"""

import sys

from microbench.cli import main

if __name__ == "__main__":
    sys.exit(main(["run", *sys.argv[1:]]))
