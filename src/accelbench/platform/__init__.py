"""What the harness runs on: dtypes, hardware peaks, the environment of a run, and the backend registry."""
