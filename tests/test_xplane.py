"""The trace parser on real CPU traces and on synthetic XSpace data shaped like GPU and TPU traces."""

import glob

import numpy as np
import pytest
from jax.profiler import ProfileData

from accelbench.jax_backend import xplane


def gpu_trace(
    iterations, kernels=(("gemm_kernel", 1000), ("convert_kernel", 100)), module="jit_mb_gemm"
):
    """XSpace text proto: one GPU stream, each iteration launching `kernels`, plus a foreign copy kernel."""
    events, t = [], 0
    for _ in range(iterations):
        for i, (_, dur_ns) in enumerate(kernels):
            events.append(
                f"events {{ metadata_id: {i + 1} offset_ps: {t * 1000} duration_ps: {dur_ns * 1000} "
                f'stats {{ metadata_id: 1 str_value: "{module}" }} }}'
            )
            t += dur_ns + 50
        t += 10_000  # host gap between blocked iterations
    events.append(
        f"events {{ metadata_id: 99 offset_ps: {t * 1000} duration_ps: 5000000 "
        f'stats {{ metadata_id: 1 str_value: "jit_input_copy" }} }}'
    )
    metadata = "".join(
        f'event_metadata {{ key: {i + 1} value {{ id: {i + 1} name: "{name}" }} }}\n'
        for i, (name, _) in enumerate(kernels)
    )
    return ProfileData.from_text_proto(f"""
planes {{ id: 1 name: "/host:CPU" }}
planes {{
  id: 2 name: "/device:GPU:0"
  lines {{ id: 1 name: "Stream #14(Compute)" timestamp_ns: 1000000 {" ".join(events)} }}
  {metadata}
  event_metadata {{ key: 99 value {{ id: 99 name: "memcpy" }} }}
  stat_metadata {{ key: 1 value {{ id: 1 name: "hlo_module" }} }}
}}""")


def test_gpu_kernels_are_attributed_per_iteration_and_foreign_modules_ignored():
    read = xplane.read(gpu_trace(4), "jit_mb_gemm", 4)
    platform, iters = read.platform, read.iterations
    assert platform == "gpu" and len(iters) == 4
    assert [it.total_ns for it in iters] == [1100.0] * 4  # gemm + convert, never the copy
    kernels = xplane.breakdown(iters)
    assert [(k.name, k.per_iter) for k in kernels] == [
        ("gemm_kernel", 1.0),
        ("convert_kernel", 1.0),
    ]
    assert kernels[0].share == pytest.approx(1000 / 1100) and kernels[0].mean_s == pytest.approx(
        1e-6
    )


def test_gpu_event_count_that_does_not_split_is_an_error():
    with pytest.raises(xplane.TraceError, match="cannot be split into 3 iterations"):
        xplane.read(gpu_trace(4), "jit_mb_gemm", 3)


def test_gpu_trace_without_the_module_is_an_error_not_a_fallback():
    with pytest.raises(xplane.TraceError, match="no kernel events of module jit_mb_add"):
        xplane.read(gpu_trace(2), "jit_mb_add", 2)


TPU = """
planes {
  id: 1 name: "/device:TPU:0"
  lines { id: 1 name: "XLA Modules" timestamp_ns: 0
    events { metadata_id: 1 offset_ps: 0 duration_ps: 10000000 }
    events { metadata_id: 1 offset_ps: 20000000 duration_ps: 12000000 }
    events { metadata_id: 2 offset_ps: 40000000 duration_ps: 1000000 } }
  lines { id: 2 name: "XLA Ops" timestamp_ns: 0
    events { metadata_id: 3 offset_ps: 0 duration_ps: 8000000 }
    events { metadata_id: 4 offset_ps: 1000000 duration_ps: 2000000 }
    events { metadata_id: 5 offset_ps: 8000000 duration_ps: 2000000 }
    events { metadata_id: 3 offset_ps: 20000000 duration_ps: 9000000 }
    events { metadata_id: 5 offset_ps: 29000000 duration_ps: 3000000 } }
  event_metadata { key: 1 value { id: 1 name: "jit_mb_quantization(7)" } }
  event_metadata { key: 2 value { id: 2 name: "jit_other(3)" } }
  event_metadata { key: 3 value { id: 3 name: "fusion.1" } }
  event_metadata { key: 4 value { id: 4 name: "nested.inner" } }
  event_metadata { key: 5 value { id: 5 name: "convert.2" } }
}
"""


def test_tpu_uses_module_executions_and_never_double_counts_nested_ops():
    read = xplane.read(ProfileData.from_text_proto(TPU), "jit_mb_quantization", 2)
    platform, iters = read.platform, read.iterations
    assert platform == "tpu"
    assert [it.total_ns for it in iters] == [10000.0, 12000.0]
    names = {k.name: k for k in xplane.breakdown(iters)}
    assert set(names) == {"fusion.1", "convert.2"}  # nested.inner sits inside fusion.1
    assert names["fusion.1"].share == pytest.approx((8000 + 9000) / 22000)


def test_tpu_wrong_execution_count_is_an_error():
    with pytest.raises(
        xplane.TraceError, match="has 2 executions of jit_mb_quantization, expected 3"
    ):
        xplane.read(ProfileData.from_text_proto(TPU), "jit_mb_quantization", 3)


def test_real_cpu_trace_gives_one_iteration_per_run_and_converts_with_xprof(tmp_path):
    import jax
    import jax.numpy as jnp

    def mb_add(x, y):
        return {"out": x + y}

    fn = jax.jit(mb_add)
    x = jnp.asarray(np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32))
    jax.block_until_ready(fn(x, x))
    jax.profiler.start_trace(str(tmp_path))
    for _ in range(5):
        jax.block_until_ready(fn(x, x))
    jax.profiler.stop_trace()
    path = xplane.find_xplane(str(tmp_path))
    read = xplane.read(ProfileData.from_file(path), "jit_mb_add", 5)
    platform, iters = read.platform, read.iterations
    assert platform == "cpu" and len(iters) == 5 and all(it.total_ns > 0 for it in iters)
    from xprof.convert import raw_to_tool_data

    data, content_type = raw_to_tool_data.xspace_to_tool_data(
        glob.glob(str(tmp_path / "plugins/profile/*/*.xplane.pb")), "trace_viewer", {}
    )
    assert "traceEvents" in data and "add" in data


def test_per_device_times_each_gpu_and_leaves_out_a_bystander():
    planes = "\n".join(
        f"""planes {{
  id: {i + 2} name: "/device:GPU:{i}"
  lines {{ id: 1 name: "Stream #1" timestamp_ns: 0
    {" ".join(f'events {{ metadata_id: 1 offset_ps: {k * 10_000_000} duration_ps: {dur * 1000} stats {{ metadata_id: 1 str_value: "jit_mb_psum" }} }}' for k, dur in enumerate(durs))} }}
  event_metadata {{ key: 1 value {{ id: 1 name: "nccl" }} }}
  stat_metadata {{ key: 1 value {{ id: 1 name: "hlo_module" }} }}
}}"""
        for i, durs in enumerate(([2000, 2100, 2200], [2500, 2000, 2300], []))
    )
    per = xplane.per_device(ProfileData.from_text_proto(planes), "jit_mb_psum", 3)
    assert sorted(per) == [
        "GPU:0",
        "GPU:1",
    ]  # GPU:2 ran nothing of the module (a send/recv bystander)
    assert per["GPU:0"] == pytest.approx([2e-6, 2.1e-6, 2.2e-6])
    assert per["GPU:1"] == pytest.approx([2.5e-6, 2e-6, 2.3e-6])


def test_per_device_reads_every_tpu_plane():
    two = TPU + TPU.replace('id: 1 name: "/device:TPU:0"', 'id: 2 name: "/device:TPU:1"')
    per = xplane.per_device(ProfileData.from_text_proto(two), "jit_mb_quantization", 2)
    assert sorted(per) == ["TPU:0", "TPU:1"]
    assert per["TPU:1"] == pytest.approx([1e-5, 1.2e-5])
    # a chip that ran the module must show every run
    with pytest.raises(xplane.TraceError, match="expected 3"):
        xplane.per_device(ProfileData.from_text_proto(two), "jit_mb_quantization", 3)


def two_chip_trace(slow: int) -> ProfileData:
    """Two TPU planes running the module twice each; chip `slow` takes 3x as long."""
    planes = []
    for chip in (0, 1):
        d = 3 if chip == slow else 1
        planes.append(f"""
planes {{
  id: {chip + 1} name: "/device:TPU:{chip}"
  lines {{ id: 1 name: "XLA Modules" timestamp_ns: 0
    events {{ metadata_id: 1 offset_ps: 0 duration_ps: {d * 1000000} }}
    events {{ metadata_id: 1 offset_ps: 20000000 duration_ps: {d * 1000000} }} }}
  event_metadata {{ key: 1 value {{ id: 1 name: "jit_mb_gemm(1)" }} }}
}}""")
    return ProfileData.from_text_proto("".join(planes))


@pytest.mark.parametrize("slow", [0, 1])
def test_max_device_reads_the_slowest_chip_and_first_device_the_first(slow):
    first = xplane.read(two_chip_trace(slow), "jit_mb_gemm", 2, "first_device").iterations
    worst = xplane.read(two_chip_trace(slow), "jit_mb_gemm", 2, "max_device").iterations
    assert [i.total_ns for i in first] == [3000.0 if slow == 0 else 1000.0] * 2
    assert [i.total_ns for i in worst] == [3000.0] * 2
