"""Reading configs: YAML, the dialects' registry, planning, run settings, sweeps and shapes."""
