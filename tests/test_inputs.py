"""inputs: rotate: distinct input sets cycled through the iterations, every one checked before timing."""

import dataclasses

import numpy as np
import pytest
from test_backends import case, jax_backend, torch_backend

from accelbench.catalogue import get_spec
from accelbench.errors import CaseFailure, Status
from accelbench.measure.inputs import Rotation, check_every_set, host_sets


def rotating(op, backend, tmp_path, sets=3, **given):
    c = case(op, backend, tmp_path, **given)
    return dataclasses.replace(c, run=dataclasses.replace(c.run, inputs="rotate", input_sets=sets))


def test_rotated_sets_are_distinct_and_cycle_in_order(tmp_path):
    c = rotating("add", "jax", tmp_path)
    hosts = host_sets(get_spec("add"), c)
    assert len(hosts) == 3
    firsts = [next(iter(h.values())) for h in hosts]
    assert not np.array_equal(firsts[0], firsts[1]) and not np.array_equal(firsts[1], firsts[2])
    rotation = Rotation(["a", "b", "c"])
    assert [rotation.next() for _ in range(5)] == ["a", "b", "c", "a", "b"]
    assert len(host_sets(get_spec("add"), case("add", "jax", tmp_path))) == 1  # fixed: one set


def test_every_set_is_checked_and_one_wrong_set_fails_the_case():
    checked = []

    def check_one(host, out):
        checked.append(host["x"])
        if out == "wrong":
            raise CaseFailure(Status.WRONG_RESULT, "set 2 is off")
        return 0.001 * host["x"]

    hosts = [{"x": 1}, {"x": 2}, {"x": 3}]
    rotation = Rotation(["s0", "s1", "s2"])
    check = check_every_set(
        hosts, rotation, lambda args: f"out-{args}", lambda out: None, check_one
    )
    assert check("out-s0") == pytest.approx(0.003) and checked == [1, 2, 3]
    bad = check_every_set(
        hosts, rotation, lambda a: "wrong" if a == "s2" else a, lambda out: None, check_one
    )
    with pytest.raises(CaseFailure):
        bad("out-s0")


@pytest.mark.parametrize("backend", [jax_backend, torch_backend])
def test_a_rotating_case_checks_each_set_and_records_how_many(backend, tmp_path):
    name = "jax" if backend is jax_backend else "torch"
    m = backend().measure(rotating("add", name, tmp_path, sets=4))
    assert m.check.text == "passed" and m.input_sets == 4 and len(m.timing.samples_s) == 3


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_an_op_that_feeds_its_output_on_refuses_rotation_on_both_backends(backend, tmp_path):
    with pytest.raises(CaseFailure) as failure:
        host_sets(get_spec("gemm_accum"), rotating("gemm_accum", backend, tmp_path))
    assert failure.value.status == Status.UNSUPPORTED
