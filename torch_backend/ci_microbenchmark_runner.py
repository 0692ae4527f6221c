"""torchao's CI dashboard runner, kept for its users:
python -m torch_backend.ci_microbenchmark_runner --config FILE --output benchmark_results.json

Same as `microbench dashboard --config FILE --output JSON` (every `run` option works).
"""

import sys

from accelbench.cli import entry

if __name__ == "__main__":
    entry(["dashboard", *sys.argv[1:]])
