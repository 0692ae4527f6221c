"""Reading configs: loading YAML, the two dialects (schema and planner of each), sweeps and shapes."""
