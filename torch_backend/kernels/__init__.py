"""This project's own kernels (Triton and CUDA C++) for the elementwise suite."""
