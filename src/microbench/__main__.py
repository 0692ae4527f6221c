"""`python -m microbench ...`: the `microbench` command."""

from microbench.entry import entry

if __name__ == "__main__":
    entry()
