"""The JAX backend: TPU first, the same code on GPU and CPU."""
