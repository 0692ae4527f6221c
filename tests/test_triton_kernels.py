"""The project's Triton kernels, run by Triton's CPU interpreter and compared with PyTorch in fp32."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT

pytest.importorskip("triton")

SCRIPT = r"""
import torch, torch.nn.functional as F
from torch_backend.kernels import triton_kernels as tk
from accelbench.measure.numerics import TOLERANCE
torch.manual_seed(0)
for dtype in (torch.float32, torch.bfloat16):
    tol = 2 * TOLERANCE[str(dtype).removeprefix("torch.")]
    x = (3 * torch.randn(4, 8, 300)).to(dtype)  # 300: not a multiple of any block
    w, b = 1 + 0.1 * torch.randn(300).to(dtype), 0.1 * torch.randn(300).to(dtype)
    cases = {"gelu": (tk.activation(x, "gelu"), F.gelu(x.float())),
             "gelu_tanh": (tk.activation(x, "gelu_tanh"), F.gelu(x.float(), approximate="tanh")),
             "silu": (tk.activation(x, "silu"), F.silu(x.float())),
             "layernorm": (tk.layernorm(x, w, b), F.layer_norm(x.float(), (300,), w.float(), b.float()))}
    for name, (got, ref) in cases.items():
        assert got.dtype == dtype and got.shape == x.shape, name
        err = ((got.float() - ref).norm() / ref.norm()).item()
        assert err <= tol, (name, dtype, err)
        print(name, dtype, f"{err:.2e}")
"""


@pytest.mark.slow
def test_triton_kernels_match_pytorch_under_the_interpreter():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("\n") == 8
