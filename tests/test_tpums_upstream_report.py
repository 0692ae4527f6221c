"""Upstream TPUMS's tests/test_report.py (at 3026affa), one test per case and named after it: the
console report's banner, cell formats and device matrix (dialects/tpums/report.py), and the
summary.csv and detailed.json a real `tpums` run writes, read back with pandas."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from accelbench.benchmarks.base import TPUMS
from accelbench.dialects.tpums import report

SMALL = {
    "gemm": "{m: 32, k: 32, n: 32}",
    "hbm": "{num_elements: 4096}",
    "host_to_device": "{data_size_mib: 1}",
    "device_to_host": "{data_size_mib: 1}",
    "device_to_device": "{data_size_mib: 1, src_device_index: 0, dst_device_index: 1}",
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Each small benchmark run once through `tpums benchmark run-config`: its output folder and
    what it printed."""
    import contextlib
    import io

    from accelbench.dialects.tpums.cli import main

    out: dict[str, tuple] = {}
    root = tmp_path_factory.mktemp("tpums_runs")
    for name, params in SMALL.items():
        config = root / f"{name}.yaml"
        config.write_text(
            f"benchmark:\n  name: {name}\n  params: {params[:-1]}, num_runs: 2, warmup_tries: 1}}\n"
        )
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
            code = main(["benchmark", "run-config", str(config), "--output_dir", str(root / name)])
        assert code == 0
        out[name] = (root / name, printed.getvalue())
    return out


def test_render_banner_box():
    lines = report.banner("Short Title", "Line 1\nLine 2").splitlines()
    assert lines == ["=" * 88, "Short Title", "=" * 88, "Line 1", "Line 2", "=" * 88]
    assert report.banner("T" * 90, "content").splitlines()[0] == "=" * (90 + 4)


def test_format_benchmark_table():
    assert report.benchmark_table(pd.DataFrame(), [], "empty") == ""
    columns = [
        ("param_col", "str"),
        ("metric_val", "2f"),
        ("missing_col", "str"),
        ("xprof_p50_ms", "4f"),
    ]
    table = report.benchmark_table(
        pd.DataFrame([{"param_col": "hello", "metric_val": 12.3456}]), columns, "custom"
    )
    assert "Benchmark Results (custom)" in table
    assert "param_col" in table and "metric_val" in table and "missing_col" in table
    assert "xprof_p50_ms" not in table  # a device column the rows lack is left out
    assert "hello" in table and "12.35" in table and "-" in table
    assert table.startswith("=") and table.endswith("=")


def test_results_to_dataframe(ran):
    folder, _ = ran["gemm"]
    frame = pd.read_csv(folder / "summary.csv")
    assert len(frame) == 1 and frame["benchmark"][0] == "GeneralizedGemmBenchmark"
    assert frame["test_name"][0].startswith("GeneralizedGemmBenchmark_")
    assert frame["m"][0] == 32 and frame["n"][0] == 32
    assert "xla_flags" in frame and "libtpu_init_args" in frame
    assert "KET_ms" not in frame and "throughput" not in frame
    assert frame["start"][0].startswith("20")


def test_value_formatters():
    f2, f4 = report.FORMATS["2f"], report.FORMATS["4f"]
    assert report.format_float(3.14159, 3) == "3.142" and report.format_float(12.3456, 1) == "12.3"
    assert report.format_float(3.14159) == "3.14" and report.format_float(42, 2) == "42.00"
    assert report.format_float(np.float32(1.23456), 3) == "1.235"
    assert report.format_float(np.int64(10), 1) == "10.0"
    for bad in (None, True, False, np.bool_(True), math.nan, np.nan, math.inf, -math.inf, "x"):
        assert report.format_float(bad) == "-" and f2(bad) == "-" and f4(bad) == "-"
    assert f2(3769.107) == "3769.11" and f2(7538.214) == "7538.21" and f2(100) == "100.00"
    assert f2(np.float64(100.0)) == "100.00" and f2(np.float32(100.5)) == "100.50"
    assert f2(np.int32(5)) == "5.00"
    assert f4(0.07111) == "0.0711" and f4(np.float32(1.23456)) == "1.2346" and f4(5) == "5.0000"
    assert f4(np.int64(7)) == "7.0000"
    fs = report.FORMATS["str"]
    assert fs("copy") == "copy" and fs(123) == "123"
    for empty in (None, "", math.nan, np.nan, pd.NA):
        assert fs(empty) == "-"


def test_format_standard_table(ran):
    folder, _ = ran["gemm"]
    frame = pd.read_csv(folder / "summary.csv")
    table = report.benchmark_table(frame, TPUMS["gemm"].report_columns, "GeneralizedGemmBenchmark")
    assert "Benchmark Results (GeneralizedGemmBenchmark)" in table
    assert "wall_clock_p50_ms" in table and "wall_clock_tflops_per_device" in table
    assert "tflops_per_chip" not in table  # one quantity, one name: upstream's (issue 60)
    assert f"{frame['wall_clock_p50_ms'][0]:.4f}" in table


def test_format_standard_table_empty_or_missing_schema():
    assert report.benchmark_table(pd.DataFrame([{"col": 1}]), [], "x") == ""


def test_format_standard_table_empty_or_none_df():
    columns = TPUMS["gemm"].report_columns
    assert report.benchmark_table(None, columns) == ""
    assert report.benchmark_table(pd.DataFrame(), columns) == ""


PAIRS = [
    {"src_device_index": 0, "dst_device_index": 1, "wall_clock_bandwidth_per_device_gb_s": 50.0},
    {"src_device_index": 1, "dst_device_index": 0, "wall_clock_bandwidth_per_device_gb_s": 55.0},
    {"src_device_index": 2, "dst_device_index": 0, "wall_clock_bandwidth_per_device_gb_s": 60.0},
]


def _rows(matrix: str, marker: str = "X") -> dict[str, list[str]]:
    return {
        parts[0]: parts[1:]
        for line in matrix.splitlines()
        if (parts := line.split()) and parts[0] in ("D0", "D1", "D2")
    }


def test_format_device_matrix():
    assert report.device_matrix(None) == "" and report.device_matrix(pd.DataFrame()) == ""
    lone = pd.DataFrame([{"src_device_index": 0, "wall_clock_bandwidth_per_device_gb_s": 1.0}])
    assert report.device_matrix(lone) == ""
    single = report.device_matrix(pd.DataFrame(PAIRS))
    assert "Device-to-Device Bandwidth Matrix (Wall Clock GB/s)" in single
    rows = _rows(single)
    assert rows["D0"][0] == rows["D1"][1] == rows["D2"][2] == "X" and single.count("X") == 3
    assert "50.00" in single and "55.00" in single and rows["D0"][2] == "-"
    assert single.startswith("=") and single.endswith("=")
    custom = report.device_matrix(pd.DataFrame(PAIRS), marker="N/A")
    assert custom.count("N/A") == 3 and _rows(custom)["D1"][1] == "N/A"
    multi = pd.DataFrame(
        [
            {"dtype": dt, "direction": d, "data_size_mib": mib, **p, "wall_clock_bandwidth_per_device_gb_s": v}
            for dt, d, mib, v in (("bfloat16", "uni", 1024, 80.0), ("float32", "bi", 2048, 160.0))
            for p in ({"src_device_index": 0, "dst_device_index": 1}, {"src_device_index": 1, "dst_device_index": 0})
        ]
    )  # fmt: skip
    both = report.device_matrix(multi)
    assert (
        "Device-to-Device Bandwidth Matrix (Wall Clock GB/s) [dtype=bfloat16, direction=uni, "
        "data_size_mib=1024]" in both
    )
    assert "[dtype=float32, direction=bi, data_size_mib=2048]" in both
    assert "80.00" in both and "160.00" in both and len(both.split("\n\n")) == 2


def test_format_device_matrix_preserves_nan_sweep_keys():
    frame = pd.DataFrame(
        [{"dtype": None, "direction": "uni", "data_size_mib": 1024, **p} for p in PAIRS[:2]]
    )
    matrix = report.device_matrix(frame)
    assert "[dtype=nan, direction=uni, data_size_mib=1024]" in matrix
    assert "D0" in matrix and "D1" in matrix and "50.00" in matrix and "55.00" in matrix


def test_generate_benchmark_report(ran):
    assert report.console_report([]) == []
    folder, printed = ran["gemm"]
    entries = json.loads((folder / "detailed.json").read_text())
    (table,) = report.console_report(entries)
    assert "Benchmark Results (GeneralizedGemmBenchmark)" in table and table in printed
    foreign = [{**e, "microbench": {**e["microbench"], "generation": "jax-bench"}} for e in entries]
    assert report.console_report(foreign) == []  # a jax-bench run's entries: no TPUMS table


def test_generate_benchmark_report_multi_benchmark(ran):
    entries = [
        *json.loads((ran["gemm"][0] / "detailed.json").read_text()),
        *json.loads((ran["hbm"][0] / "detailed.json").read_text()),
    ]
    gemm, hbm = report.console_report(entries)
    assert "(GeneralizedGemmBenchmark)" in gemm and "(HBMBandwidthBenchmark)" in hbm
    assert "total_bytes_mib" in hbm and "wall_clock_bandwidth_per_device_gb_s" in hbm


def test_generate_benchmark_report_dual_formatter(ran):
    folder, printed = ran["device_to_device"]
    entries = json.loads((folder / "detailed.json").read_text())
    table, matrix = report.console_report(entries)
    assert "Benchmark Results (DeviceToDeviceBenchmark)" in table
    assert "Device-to-Device Bandwidth Matrix (Wall Clock GB/s)" in matrix
    assert _rows(matrix)["D0"][0] == "X" and matrix in printed


def test_generate_benchmark_report_formatter_injection():
    """Which sections a benchmark's report has is its entry's declaration: the device matrix only
    where the entry asks for it."""
    assert [n for n, e in TPUMS.items() if e.device_matrix] == ["device_to_device"]


def test_save_output(ran):
    folder, _ = ran["gemm"]
    frame = pd.read_csv(folder / "summary.csv")
    (entry,) = json.loads((folder / "detailed.json").read_text())
    assert entry["metadata"]["benchmark_name"] == frame["benchmark"][0]
    assert "xla_flags" in entry["metadata"] and "libtpu_init_args" in entry["metadata"]
    assert entry["metrics"]["wall_clock_p50_ms"] == pytest.approx(frame["wall_clock_p50_ms"][0])
    assert "KET_ms" not in frame and "throughput" not in frame


def test_save_output_custom_json_serialization(ran):
    """detailed.json holds only JSON values: every metric reads back as a number, string, bool or
    null."""
    for folder, _ in ran.values():
        for entry in json.loads((folder / "detailed.json").read_text()):
            assert all(
                v is None or isinstance(v, (int, float, str, bool, list, dict))
                for v in entry["metrics"].values()
            )


def test_save_output_bandwidth_metric(ran):
    frame = pd.read_csv(ran["hbm"][0] / "summary.csv")
    assert "Unnamed: 0" not in frame and "throughput" not in frame and "KET_ms" not in frame
    assert frame["benchmark"][0] == "HBMBandwidthBenchmark"
    per_device = frame["wall_clock_bandwidth_per_device_gb_s"][0]
    assert per_device > 0 and frame["wall_clock_bandwidth_per_chip_gb_s"][0] == per_device


def test_save_output_tflops(ran):
    frame = pd.read_csv(ran["gemm"][0] / "summary.csv")
    p50_s = frame["wall_clock_p50_ms"][0] / 1e3
    assert frame["wall_clock_tflops_per_device"][0] == pytest.approx(2 * 32**3 / p50_s / 1e12)
    assert "throughput" not in frame


def test_report_results(ran):
    _, printed = ran["gemm"]
    assert "Benchmark Results (GeneralizedGemmBenchmark)" in printed


def test_generate_benchmark_report_default_fallback():
    """A benchmark whose entry declares nothing special still gets its table: its fields, then each
    domain's p50 and rate."""
    columns = dict(TPUMS["rope"].report_columns)
    assert columns["seq_len"] == "str" and columns["wall_clock_p50_ms"] == "4f"


def test_results_to_dataframe_h2d_d2h_d2d_metrics(ran):
    for name in ("host_to_device", "device_to_host", "device_to_device"):
        frame = pd.read_csv(ran[name][0] / "summary.csv")
        assert (frame["wall_clock_bandwidth_per_device_gb_s"] > 0).all(), name
        assert "wall_clock_bandwidth_per_chip_gb_s" not in frame, name
        assert "throughput" not in frame
    frame = pd.read_csv(ran["host_to_device"][0] / "summary.csv")
    table = report.benchmark_table(
        frame, [("wall_clock_bandwidth_per_device_gb_s", "2f")], "HostToDeviceBenchmark"
    )
    assert f"{frame['wall_clock_bandwidth_per_device_gb_s'][0]:.2f}" in table


def test_format_benchmark_table_empty_active_schema():
    frame = pd.DataFrame([{"param_col": "hello"}])
    assert report.benchmark_table(frame, [("xprof_p50_ms", "4f")]) == ""


def test_format_device_matrix_xprof_and_empty_devices():
    frame = pd.DataFrame(
        [
            {**PAIRS[0], "xprof_bandwidth_per_device_gb_s": 99.5},
            {**PAIRS[1], "xprof_bandwidth_per_device_gb_s": 98.0},
        ]
    )
    matrix = report.device_matrix(frame)
    assert "Device-to-Device Bandwidth Matrix (XProf GB/s)" in matrix and "99.50" in matrix
    empty = pd.DataFrame(
        [
            {
                "src_device_index": None,
                "dst_device_index": None,
                "wall_clock_bandwidth_per_device_gb_s": 5,
            }
        ]
    )
    assert report.device_matrix(empty) == ""


def test_with_a_machine_format_stdout_is_that_format_alone(tmp_path, capsys):
    """`--format csv`: TPUMS's tables go to stderr, so stdout is the CSV (as a pipe to pandas needs)."""
    import io

    from accelbench.cli import main

    config = tmp_path / "gemm.yaml"
    config.write_text(f"benchmark:\n  name: gemm\n  params: {SMALL['gemm'][:-1]}, num_runs: 2}}\n")
    argv = ["run", "--config", str(config), "-o", str(tmp_path / "o.csv"), "--format", "csv"]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert pd.read_csv(io.StringIO(printed.out))["status"].tolist() == ["ok"]
    assert "Benchmark Results (GeneralizedGemmBenchmark)" in printed.err
