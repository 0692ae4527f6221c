"""CUDA C++ kernels built with torch.utils.cpp_extension (needs nvcc, ninja and a CUDA device): GELU
(exact, tanh) and SiLU in a grid-stride loop, LayerNorm one block per row (mean, then centred variance).
The source includes only c10's stream and launch-check headers: ATen/cuda/CUDAContext.h needs cuSPARSE,
cuBLAS and cuSOLVER headers that a toolkit of nvcc and the runtime alone does not have. A failed build
is tried once a process; run/runner.py names the missing piece in an `unsupported` row."""

from __future__ import annotations

import functools
import shutil

import torch

from accelbench.errors import unsupported

_CUDA = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <algorithm>

template <typename T, int OP>
__global__ void activation_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float v = static_cast<float>(x[i]);
    float r;
    if (OP == 0) r = 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    else if (OP == 1) r = 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    else r = v / (1.f + __expf(-v));
    y[i] = static_cast<T>(r);
  }
}

__device__ float block_sum(float v, float* shared) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = (threadIdx.x < blockDim.x / 32) ? shared[threadIdx.x] : 0.f;
  if (warp == 0) for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (threadIdx.x == 0) shared[0] = v;
  __syncthreads();
  float total = shared[0];
  __syncthreads();
  return total;
}

template <typename T>
__global__ void layernorm_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                 T* __restrict__ y, int hidden, float eps) {
  __shared__ float shared[32];
  const T* row = x + (int64_t)blockIdx.x * hidden;
  T* out = y + (int64_t)blockIdx.x * hidden;
  float sum = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) sum += static_cast<float>(row[i]);
  float mean = block_sum(sum, shared) / hidden;
  float sq = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) { float d = static_cast<float>(row[i]) - mean; sq += d * d; }
  float rstd = rsqrtf(block_sum(sq, shared) / hidden + eps);
  for (int i = threadIdx.x; i < hidden; i += blockDim.x)
    out[i] = static_cast<T>((static_cast<float>(row[i]) - mean) * rstd * static_cast<float>(w[i]) + static_cast<float>(b[i]));
}

torch::Tensor activation(torch::Tensor x, int64_t op) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  int64_t n = x.numel();
  int threads = 256;
  int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
  auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "activation", [&] {
    if (op == 0) activation_kernel<scalar_t, 0><<<blocks, threads, 0, stream>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
    else if (op == 1) activation_kernel<scalar_t, 1><<<blocks, threads, 0, stream>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
    else activation_kernel<scalar_t, 2><<<blocks, threads, 0, stream>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor layernorm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  int hidden = x.size(-1);
  int64_t rows = x.numel() / hidden;
  auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "layernorm", [&] {
    layernorm_kernel<scalar_t><<<rows, 512, 0, stream>>>(x.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(),
        b.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), hidden, (float)eps);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_CPP = """
torch::Tensor activation(torch::Tensor x, int64_t op);
torch::Tensor layernorm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);
"""


def available() -> str | None:
    """None when the extension can be built here, else the reason it cannot."""
    if not torch.cuda.is_available():
        return "the CUDA implementation needs a CUDA device"
    from torch.utils.cpp_extension import CUDA_HOME, is_ninja_available

    if not (shutil.which("nvcc") or CUDA_HOME):
        return "the CUDA implementation needs nvcc (CUDA toolkit) to build"
    if not is_ninja_available():
        return "the CUDA implementation needs ninja to build (pip install ninja)"
    return None


def extension():
    built = _build()
    if isinstance(built, BaseException):
        raise built
    return built


@functools.lru_cache(maxsize=1)
def _build():
    """The extension, or what stopped it (kept: a failed build is not retried for every case)."""
    reason = available()
    if reason:
        return unsupported(reason)
    try:
        return _load()
    except Exception as error:  # noqa: BLE001 - the runner reads the build's output
        return error


def _load():
    from torch.utils.cpp_extension import load_inline

    major, minor = torch.cuda.get_device_capability()
    return load_inline(
        name="microbench_elementwise",
        cpp_sources=_CPP,
        cuda_sources=_CUDA,
        functions=["activation", "layernorm"],
        extra_cuda_cflags=[
            "-O3",
            "--use_fast_math",
            f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}",
        ],
        verbose=False,
    )
