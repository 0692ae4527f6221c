"""The jax-bench harness's transformer_layer_moe: a pre-normalised two-block feed-forward layer,

    n = standardize(x);  h = x + (n W1) W2;  y = h + (h W3) W4

Despite its name upstream's layer has no attention, experts or routing; this is that layer, sharded over
a (cp, tp) mesh: tokens over cp, the weights over tp (the partial sums all-reduced by XLA). Expert
parallelism (ep, etp) needs experts: such cases are `unsupported`, saying so. FLOPs: 20 mslen D^2 for
the matmuls (upstream: 24) + 7 mslen D; bytes: x, y and the weights once (upstream added intermediates)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelbench.catalogue import (
    Arrays,
    OpParams,
    OpSpec,
    implementation,
    param,
    params_of,
    register,
)
from accelbench.core.case import Case
from accelbench.core.types import Prepared
from accelbench.errors import unsupported
from accelbench.measure.numerics import check_outputs, digest_rows
from accelbench.ops.common import PlacementExtras, f64
from accelbench.platform.dtypes import dtype
from accelbench.platform.frameworks import jax

EPS = 1e-5
WIDTHS = {"w1": (1, 3), "w2": (3, 1), "w3": (1, 2), "w4": (2, 1)}  # (rows, cols) in units of D


@dataclass(frozen=True)
class TransformerParams(OpParams):
    model_dim: int = param("dim", 7168)
    mslen: int = param("dim", 1024, doc="tokens (the sequence length of one micro-batch)")
    dtype: str = param("dtype", "bfloat16", ("bfloat16", "float32", "float16"))
    tp: int = param("int", 1, doc="tensor parallel: weights split over tp devices")
    cp: int = param("int", 1, doc="context parallel: tokens split over cp devices")
    ep: int = param("int", 1, doc="expert parallel: the layer has no experts (must be 1)")
    etp: int = param("int", 1, doc="expert tensor parallel: must be 1, as ep")
    seed: int = param("int", 0)


def layer_flops(p: TransformerParams) -> float:
    return 20.0 * p.mslen * p.model_dim**2 + 7.0 * p.mslen * p.model_dim


def layer_bytes(p: TransformerParams) -> float:
    d, s = p.model_dim, dtype(p.dtype).nbytes
    return s * (2.0 * p.mslen * d + 10.0 * d * d)


def make_inputs(p: TransformerParams, rng: np.random.Generator) -> Arrays:
    """x standard normal; each weight normal over sqrt(fan-in), so the activations stay O(1)."""
    dt, d = dtype(p.dtype).numpy, p.model_dim
    x: Arrays = {"x": rng.standard_normal((p.mslen, d), dtype=np.float32).astype(dt)}
    for name, (rows, cols) in WIDTHS.items():
        w = rng.standard_normal((rows * d, cols * d), dtype=np.float32) / math.sqrt(rows * d)
        x[name] = w.astype(dt)
    return x


def standardize(x: Any, mean: Any, sqrt: Any) -> Any:
    centred = x - mean(x, axis=-1, keepdims=True)
    return centred / sqrt(mean(centred * centred, axis=-1, keepdims=True) + EPS)


def reference(x: Arrays, p: TransformerParams, rows: np.ndarray) -> Arrays:
    """Row by row (each output row depends on its input row only); one float64 weight at a time."""
    rows_x = f64(x["x"][rows])
    h = rows_x + (standardize(rows_x, np.mean, np.sqrt) @ f64(x["w1"])) @ f64(x["w2"])
    return {"out": h + (h @ f64(x["w3"])) @ f64(x["w4"])}


def problem(p: TransformerParams) -> str | None:
    if p.ep > 1 or p.etp > 1:
        return None  # a case that runs as unsupported, saying why (the planner must not refuse it)
    if p.mslen % p.cp:
        return f"mslen {p.mslen} does not split over cp={p.cp}"
    if (2 * p.model_dim) % p.tp or (3 * p.model_dim) % p.tp:
        return f"the layer's 2D and 3D widths do not split over tp={p.tp}"
    return None


SPEC = register(
    OpSpec(
        name="transformer_layer_moe",
        doc="x + FFN(norm(x)) then + FFN: two feed-forward blocks, sharded over cp x tp devices",
        typed=TransformerParams,
        flops=layer_flops,
        bytes=layer_bytes,
        peak_dtype=lambda p: dtype(p.dtype).peak_family,
        make_inputs=make_inputs,
        reference=reference,
        output_rows=lambda p: int(p.mslen),
        constraint=problem,
        row_extras=PlacementExtras,
    )
)


def devices_for(p: TransformerParams) -> int:
    if p.ep > 1 or p.etp > 1:
        raise unsupported(
            f"ep={p.ep}, etp={p.etp}: expert parallelism needs experts, and this layer "
            "(upstream's too) has none; run with ep=etp=1"
        )
    return p.tp * p.cp


def layer(x: Any, w1: Any, w2: Any, w3: Any, w4: Any) -> dict[str, Any]:
    jnp = jax.numpy

    def mm(a: Any, b: Any) -> Any:  # fp32 accumulation, rounded to x's dtype
        return jnp.matmul(a, b, preferred_element_type=jnp.float32).astype(x.dtype)

    h = x + mm(mm(standardize(x.astype(jnp.float32), jnp.mean, jnp.sqrt).astype(x.dtype), w1), w2)
    return {"out": h + mm(mm(h, w3), w4)}


@implementation("transformer_layer_moe", "jax", "jit")
def jax_layer(backend: Any, case: Case) -> Prepared:
    """The layer jitted over a (cp, tp) mesh of the first tp x cp devices."""
    p = params_of(case, TransformerParams)
    need = devices_for(p)
    devices = jax.devices()
    if len(devices) < need:
        raise unsupported(f"tp={p.tp} x cp={p.cp} needs {need} devices, {len(devices)} are visible")
    mesh = jax.sharding.Mesh(np.array(devices[:need]).reshape(p.cp, p.tp), ("cp", "tp"))
    P = jax.sharding.PartitionSpec
    layout = dict(
        x=P("cp", None), w1=P(None, "tp"), w2=P("tp", None), w3=P(None, "tp"), w4=P("tp", None)
    )
    host = make_inputs(p, np.random.default_rng(p.seed))
    args = [jax.device_put(host[n], jax.sharding.NamedSharding(mesh, layout[n])) for n in host]
    compiled = backend.compile(case, SPEC, layer, args, ())

    def fetch(out: dict[str, Any], name: str, rows: np.ndarray) -> np.ndarray:
        return np.asarray(jax.device_get(out[name]))[rows]

    extras = PlacementExtras(used_device_count=need, sharding=f"tp={p.tp} cp={p.cp}")
    return Prepared(
        call=lambda: compiled.fn(*args),
        sync=jax.block_until_ready,
        check=lambda out: check_outputs(SPEC, p, host, lambda n, r: fetch(out, n, r)),
        digest=lambda out: digest_rows(SPEC, p, host, lambda n, r: fetch(out, n, r)),
        compile_s=compiled.seconds,
        compiler=compiled.counts,
        implementation="jit",
        finish=lambda timing, companions: extras,
    )
