"""The op catalogue's families: `catalogue.discover()` imports each module, which registers its specs
and JAX (or host) implementations; the PyTorch ones register the same way from `torch_backend.ops`."""
