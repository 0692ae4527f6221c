"""PyTorch implementations of the catalogue's ops, one module per op family (the twin of accelbench/ops),
each importing torch lazily (accelbench.platform.frameworks): discovering the catalogue imports none.
"""
