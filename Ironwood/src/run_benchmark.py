"""Entry point documented by the Ironwood guide: python Ironwood/src/run_benchmark.py --config=FILE.

This is the project's one entry shim: when the package is not installed it puts the
repository's src/ and root (for torch_backend) on sys.path, then hands over to
`microbench run`. Every option of `microbench run` works here too.
"""

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
