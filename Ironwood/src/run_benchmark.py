"""The Ironwood guide's `python Ironwood/src/run_benchmark.py --config=FILE`: `microbench run`
(every option); the repository's src/ and root go on sys.path when the package is not installed."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import accelbench  # noqa: F401
except ImportError:
    sys.path[:0] = [os.path.join(ROOT, "src"), ROOT]

from accelbench.entry import entry  # noqa: E402

if __name__ == "__main__":
    entry(["run", *sys.argv[1:]])
