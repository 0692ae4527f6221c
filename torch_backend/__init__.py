"""The PyTorch backend: parity compute ops, torchao quantization, fusion and elementwise suites."""
