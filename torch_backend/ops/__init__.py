"""PyTorch implementations of the catalogue's ops, one module per op family (the twin of microbench/ops).

Each registers with `microbench.catalogue.implementation(op, "torch", name)`; `build(backend, case)`
returns a `Prepared` for the one measurement procedure. Modules import torch lazily
(microbench.platform.frameworks), so discovering the catalogue costs no framework import.
"""
