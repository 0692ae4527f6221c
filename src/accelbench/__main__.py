"""`python -m accelbench ...`: the `microbench` command."""

from accelbench.entry import entry

if __name__ == "__main__":
    entry()
