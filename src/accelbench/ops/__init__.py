"""The op catalogue's families. Every module here is imported by `accelbench.catalogue.discover()`;
each registers its specs and its JAX (or host) implementations. PyTorch implementations register the
same way from `torch_backend.ops`."""
