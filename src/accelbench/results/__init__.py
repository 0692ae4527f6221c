"""What a run leaves behind: typed rows, the writer, and the tools that read results (compare, report)."""
