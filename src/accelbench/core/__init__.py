"""The harness's core types, below every other package: a case, what a backend prepares for it, and the
samples a timer returns with their statistics. Nothing here imports a framework or another layer."""
