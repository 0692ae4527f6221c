"""Loading, validating and expanding benchmark configs (Ironwood and torchao dialects)."""
