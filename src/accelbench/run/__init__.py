"""Running a planned config: case execution, isolation, pairing across backends, the session."""
