"""Device-accurate accelerator microbenchmarks for JAX and PyTorch."""

__version__ = "0.1.0"
