"""The reference dialects, one subpackage each (`ironwood`, `jax_bench`, `tpums`, `torchao`): each holds
everything its configs are (benchmark names and fields, schema, planner, outputs, command line) and
registers itself with `config.dialects.register_dialect` when imported. Discovered, never listed."""
