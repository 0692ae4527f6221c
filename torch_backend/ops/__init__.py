"""PyTorch implementations of the catalogue's ops, one module per op family (the twin of accelbench/ops).

Each registers with `accelbench.catalogue.implementation(op, "torch", name)`; `build(backend, case)`
returns a `Prepared` for the one measurement procedure. Modules import torch lazily
(accelbench.platform.frameworks), so discovering the catalogue costs no framework import.
"""
