"""Any callable as an op: what `accelbench.bench(fn, ...)` times. The user's function and its inputs are
held here under the case's name for the length of one measurement; the case then goes through the same
backend, timer, procedure and row as every catalogue op: the library and the YAML path cannot drift."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelbench.catalogue import OpParams, OpSpec, Traits, get_spec, implementation, param, register
from accelbench.core.case import Case
from accelbench.core.types import Prepared
from accelbench.errors import unsupported, wrong_result
from accelbench.measure.numerics import relative_error, tolerance
from accelbench.platform.dtypes import dtype

OP = "callable"


@dataclass(frozen=True)
class CallableParams(OpParams):
    name: str = param("str", "fn", doc="the function's name (its rows' and comparisons' key)")
    variant: str = param("str", "default", doc="which version of it (compare --by variant)")
    flops: float = param("float", 0.0, doc="floating-point operations per call (0: unknown)")
    bytes: float = param("float", 0.0, doc="bytes moved per call (0: unknown)")
    dtype: str = param("dtype", "bfloat16", doc="the dtype whose peak bounds it (the roofline's)")


@dataclass
class Call:
    """One function to time, its input sets (tuples of positional arguments), float64 reference."""

    fn: Callable[..., Any]
    arg_sets: Sequence[tuple[Any, ...]]
    reference: Callable[..., Any] | None = None
    rtol: float | None = None  # the relative error allowed; by default the output dtype's


CALLS: dict[str, Call] = {}  # by case name, while it is measured
Runner = Callable[[tuple[Any, ...]], Any]  # one input set to the function's output
Sync = Callable[[Any], None]


register(
    OpSpec(
        name=OP,
        suite="library",
        doc="a function given to accelbench.bench(), timed as any op",
        typed=CallableParams,
        flops=lambda p: p.flops,
        bytes=lambda p: p.bytes,
        peak_dtype=lambda p: dtype(p.dtype).peak_family,
        traits=Traits(internal=True),
    )
)


def call_of(case: Case) -> Call:
    try:
        return CALLS[case.params.name]
    except KeyError:
        raise unsupported("a callable is timed through accelbench.bench(), not a config") from None


def leaves(value: Any) -> list[Any]:
    """The arrays of a function's output, in order: itself, or those of a tuple, list or dict."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves(v)]
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in leaves(v)]
    return [value] if hasattr(value, "shape") else []


def host64(value: Any) -> Any:
    """An array of any framework as a float64 NumPy array; anything else as it is."""
    if not hasattr(value, "shape"):
        return value
    if type(value).__module__.startswith("torch"):
        return value.detach().to("cpu").double().numpy()
    return np.asarray(value).astype(np.float64)


def dtype_name(value: Any) -> str:
    return str(getattr(value, "dtype", "float64")).removeprefix("torch.")


def checker(call: Call, run: Runner) -> Callable[[Any], float] | None:
    """The check of every input set's output against the float64 reference: the worst relative error,
    or a wrong_result failure past the tolerance (the output dtype's, or `rtol`)."""
    if (reference := call.reference) is None:
        return None

    def one(args: tuple[Any, ...], out: Any) -> float:
        got = leaves(out)
        want = leaves(reference(*(host64(a) for a in args)))
        if len(got) != len(want):
            raise wrong_result(f"the function gave {len(got)} arrays, the reference {len(want)}")
        worst = 0.0
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            err = relative_error(host64(g), np.asarray(w, dtype=np.float64))
            allowed = call.rtol if call.rtol is not None else tolerance(dtype_name(g))
            if not err <= allowed:  # NaN too
                raise wrong_result(
                    f"output {i} differs from the float64 reference: relative error {err:.3g} > "
                    f"tolerance {allowed:.3g} ({dtype_name(g)})"
                )
            worst = max(worst, err)
        return worst

    def check(out: Any) -> float:
        sets = call.arg_sets
        return max([one(sets[0], out), *(one(args, run(args)) for args in sets[1:])])

    return check


def cycling(call: Call, run: Runner) -> Callable[[], Any]:
    """One iteration: the function of the next input set (inputs: rotate), or of the only one."""
    if len(call.arg_sets) == 1:
        only = call.arg_sets[0]
        return lambda: run(only)
    sets: Iterator[tuple[Any, ...]] = itertools.cycle(call.arg_sets)
    return lambda: run(next(sets))


def prepared(call: Call, sync: Sync, impl: str, run: Runner | None = None, **more: Any) -> Prepared:
    """Each iteration the function (through `run`, else as it is) on the next input set, every set
    checked against the reference."""
    run = run or (lambda args: call.fn(*args))
    sets = len(call.arg_sets)
    return Prepared(
        cycling(call, run), sync, checker(call, run), implementation=impl, input_sets=sets, **more
    )


@implementation(OP, "numpy", "numpy")
def numpy_callable(backend: Any, case: Case) -> Prepared:
    return prepared(call_of(case), lambda out: None, "numpy")


@implementation(OP, "jax", "jit")
def jax_callable(backend: Any, case: Case) -> Prepared:
    """The function jitted as one program under the case's module name (what the trace's kernels are
    found by); its non-array arguments are bound, not traced."""
    import jax

    call = call_of(case)
    first = call.arg_sets[0]
    at = [i for i, a in enumerate(first) if hasattr(a, "shape") and hasattr(a, "dtype")]

    def body(*arrays: Any) -> Any:
        full = list(first)
        for i, a in zip(at, arrays, strict=True):
            full[i] = a
        return call.fn(*full)

    compiled = backend.compile(case, get_spec(OP), body, [first[i] for i in at], ())

    def run(args: tuple[Any, ...]) -> Any:
        return compiled.fn(*(args[i] for i in at))

    timed = {"compile_s": compiled.seconds, "compiler": compiled.counts}
    return prepared(call, jax.block_until_ready, "jit", run, **timed)
