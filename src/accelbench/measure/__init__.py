"""How one case is measured: the procedure, the timers, numerics checks and statistics."""
