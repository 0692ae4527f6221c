"""The reference harness's benchmarks, both of its generations (jax-bench, TPUMS): `base` (what one
is, and the registries), the families (`compute`, `memory`, `collective`) and TPUMS's names
(`tpums`), how a file's points become cases (`cases`) and how the harness's files are written
(`files`). This package's own import is light: the dialects' flags (`flags`) are read by the command
line's help."""
