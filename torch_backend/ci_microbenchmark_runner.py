"""torchao's CI dashboard runner, for its users: `python -m torch_backend.ci_microbenchmark_runner
--config FILE --output JSON` is `microbench dashboard` with them (every `run` option works)."""

import sys

from accelbench.cli import entry

if __name__ == "__main__":
    entry(["dashboard", *sys.argv[1:]])
