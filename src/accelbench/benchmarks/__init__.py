"""The reference harness's benchmarks, both generations (jax-bench, TPUMS). A light import: the
command line's help reads `flags`."""
