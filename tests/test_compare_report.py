"""compare: matched cases, noise-aware verdicts, exit codes. report: non-empty PNGs with every row plotted."""

import csv
import json
import os
from pathlib import Path

import matplotlib.image
import pytest

from accelbench.catalogue import ReadParams
from accelbench.ops.common import PlacementExtras
from accelbench.results.columns import header
from accelbench.results.verdict import CONDITIONS_DIFFER

COLUMNS = header(["m", "n", "dtype"], [PlacementExtras])


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in COLUMNS})


def row(m, median, spread=0.01, backend="jax", **extra):
    return {
        "case_id": f"{backend}{m}",
        "status": "ok",
        "op": "add",
        "backend": backend,
        "m": m,
        "n": 64,
        "dtype": "bfloat16",
        "time_median_s": median,
        "time_p10_s": median * (1 - spread),
        "time_p90_s": median * (1 + spread),
        **extra,
    }


@pytest.fixture
def runs(tmp_path):
    base = [row(1, 1.0e-3), row(2, 2.0e-3), row(3, 3.0e-3, spread=0.2)]
    cand = [row(1, 1.3e-3), row(2, 2.005e-3), row(3, 3.3e-3, spread=0.2)]
    write(tmp_path / "a.csv", base)
    write(tmp_path / "b.csv", cand)
    return tmp_path


def test_a_real_regression_fails_and_a_change_inside_the_noise_is_noise(runs, run_cli):
    code, out, _ = run_cli("compare", str(runs / "a.csv"), str(runs / "b.csv"))
    assert code == 1
    lines = {line.split("│")[1].strip(): line for line in out.splitlines() if "│ add" in line}
    assert "slower" in lines["add jax m=1 n=64"]
    assert "noise" in lines["add jax m=2 n=64"]
    assert (
        "inconclusive (noisy)" in lines["add jax m=3 n=64"]
    )  # +10% inside a 20% spread: no verdict
    assert "regression: 1 of 3 matched cases are slower by more than 5%" in out


def test_no_regression_exits_zero(runs, run_cli):
    code, out, _ = run_cli("compare", str(runs / "a.csv"), str(runs / "a.csv"))
    assert code == 0 and out.count("│ noise") == 3


def test_group_comparison_inside_one_file(tmp_path, run_cli):
    write(
        tmp_path / "r.csv",
        [
            row(1, 1e-3, backend="jax"),
            row(1, 2e-3, backend="torch"),
            row(2, 1e-3, backend="jax"),
            row(2, 1.001e-3, backend="torch"),
        ],
    )
    code, out, _ = run_cli(
        "compare", str(tmp_path / "r.csv"), "--by", "backend", "--baseline", "jax"
    )
    # a pivot of the groups to read, never a regression gate (issue 36)
    assert code == 0 and "slower" not in out and "regression" not in out
    line = next(x for x in out.splitlines() if "m=1 " in x)
    assert "(2.00x)" in line


def test_group_comparison_pairs_every_implementation_of_a_side(tmp_path, run_cli):
    """JAX against each PyTorch twin: eager and compile are two pairs, not one that hides the other."""
    import json

    write(
        tmp_path / "r.csv",
        [
            row(1, 1e-3, backend="jax", implementation="jit"),
            {**row(1, 2e-3, backend="torch", implementation="eager"), "case_id": "e"},
            {**row(1, 0.5e-3, backend="torch", implementation="compile"), "case_id": "c"},
        ],
    )
    code, out, _ = run_cli(
        "compare", str(tmp_path / "r.csv"), "--by", "backend", "--baseline", "jax", "--json"
    )
    pairs = {p["case"].split("[")[1]: p["ratio"] for p in json.loads(out)["pairs"]}
    assert pairs == {
        "torch:eager vs jax]": pytest.approx(2.0),
        "torch:compile vs jax]": pytest.approx(0.5),
    }
    assert code == 0  # no verdict on a framework comparison


def test_compare_bad_input(tmp_path, run_cli):
    assert run_cli("compare", str(tmp_path / "nope.csv"), str(tmp_path / "nope.csv"))[2].endswith(
        "results file not found\n"
    )
    write(tmp_path / "r.csv", [row(1, 1e-3)])
    code, _, err = run_cli("compare", str(tmp_path / "r.csv"), "--by", "backnd")
    assert code == 2 and "(did you mean 'backend'?)" in err


def test_report_writes_pngs_with_every_row_plotted(tmp_path, run_cli):
    rows = [
        row(
            m,
            m * 1e-6,
            tflop_per_s=m * 0.01,
            gb_per_s=m * 10.0,
            intensity_flop_per_byte=0.3,
            peak_tflop_per_s=989.4,
            peak_gb_per_s=4800,
            peak_chip="h200-sxm",
            peak_family="bf16",
            roofline_bound_by="memory",
        )
        for m in (256, 512, 1024, 2048, 4096)
    ]
    rows.append({"case_id": "x", "status": "error", "op": "add", "backend": "jax", "m": 8, "n": 64})
    write(tmp_path / "r.csv", rows)
    code, out, _ = run_cli("report", str(tmp_path / "r.csv"), "--output-dir", str(tmp_path / "rep"))
    assert code == 0
    assert f"{tmp_path / 'rep' / 'roofline.png'}: 5 points" in out
    assert f"{tmp_path / 'rep' / 'sweep_add.png'}: 5 points" in out
    for name in ("roofline.png", "sweep_add.png"):
        image = matplotlib.image.imread(tmp_path / "rep" / name)
        assert image.shape[0] > 300 and image.shape[1] > 500 and image.std() > 0
    summary = (tmp_path / "rep" / "summary.md").read_text()
    lines = [line for line in summary.splitlines() if line.startswith("| add ")]
    assert len(lines) == 6 and sum("| error " in line for line in lines) == 1


def test_compare_never_gives_a_false_green(tmp_path, run_cli):
    write(tmp_path / "a.csv", [row(1, 1e-3), row(2, 1e-3)])
    write(
        tmp_path / "failed.csv",
        [dict(row(1, 1e-3), status="error"), dict(row(2, 1e-3), status="oom")],
    )
    write(tmp_path / "other.csv", [row(7, 1e-3)])
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "foreign.csv").write_text("a,b\n1,2\n")
    assert run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "failed.csv"))[0] == 1
    assert run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "other.csv"))[0] == 2
    code, _, err = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "empty.csv"))
    assert code == 2 and "empty.csv: no rows" in err
    code, _, err = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "foreign.csv"))
    assert code == 2 and "not a results file of this harness" in err
    (tmp_path / "none").mkdir()  # a folder is a run's files (issue 36): one holding none is refused
    assert run_cli("compare", str(tmp_path / "none"), str(tmp_path / "a.csv"))[0] == 2
    code, _, err = run_cli(
        "compare", str(tmp_path / "a.csv"), str(tmp_path / "a.csv"), "--threshold", "nan"
    )
    assert code == 2 and "--threshold" in err


@pytest.mark.slow  # over a second: the full suite runs it
def test_a_two_backend_sweep_is_one_series_per_backend_and_implementation(
    tmp_path, write_yaml, run_cli
):
    """Tied dimensions (n: SAME_AS_m) share the axis; JAX and each PyTorch twin are their own line."""
    from accelbench.results.reading import read_rows
    from accelbench.results.report import sweep_series

    path = write_yaml(
        f"""
        num_runs: 3
        backend: [jax, torch]
        benchmarks:
        - benchmark_name: add
          csv_path: {tmp_path}/s.csv
          implementation: eager
          benchmark_sweep_params:
          - {{m: {{start: 64, end: 256, multiplier: 2}}, n: SAME_AS_m}}
        """
    )
    code, _, _ = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 0
    sweep = sweep_series(read_rows(str(tmp_path / "s.csv")))["add"]
    assert sweep.axis == "m" and sweep.metric == "GB/s"
    lines = sweep.throughput
    assert sorted(lines) == ["backend=jax implementation=jit", "backend=torch implementation=eager"]
    assert sorted(sweep.latency) == sorted(lines)  # the latency panel draws the same series
    for points in [*lines.values(), *sweep.latency.values()]:
        assert [p[0] for p in points] == [64, 128, 256]
        assert all(p[2] >= 0 and p[3] >= 0 for p in points)  # p10-p90 bars around the median
    code, _, _ = run_cli("report", str(tmp_path / "s.csv"), "--output-dir", str(tmp_path / "r"))
    assert code == 0 and (tmp_path / "r" / "sweep_add.png").exists()


def test_verdicts_come_from_a_rank_test_on_the_raw_samples(tmp_path, run_cli):
    """Medians 10% apart: a regression when the samples are tight; inconclusive when they scatter so
    widely that the ratio's 95% interval straddles the threshold (one distribution on both sides)."""
    import json

    import numpy as np

    rng = np.random.default_rng(0)
    tight_a, tight_b = 1e-3 + rng.normal(0, 1e-6, 30), 1.1e-3 + rng.normal(0, 1e-6, 30)
    wide_a, wide_b = 1e-3 * rng.lognormal(0, 0.5, 30), 1e-3 * rng.lognormal(0, 0.5, 30)
    for name, samples in (("a", (tight_a, wide_a)), ("b", (tight_b, wide_b))):
        rows = []
        for m, s in zip((1, 2), samples, strict=True):
            rows.append({**row(m, float(np.median(s)), spread=0.0), "case_id": f"{name}{m}"})
        write(tmp_path / f"{name}.csv", rows)
        with open(tmp_path / f"{name}.jsonl", "w") as f:
            for r, s in zip(rows, samples, strict=True):
                f.write(json.dumps({"case_id": r["case_id"], "samples_s": list(s)}) + "\n")
    code, out, _ = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"))
    lines = {line.split("│")[1].strip(): line for line in out.splitlines() if "│ add" in line}
    assert code == 1 and "slower" in lines["add jax m=1 n=64"]
    # the two wide sides' p10-p90 would not overlap at spread 0, but their samples are one distribution
    assert "inconclusive" in lines["add jax m=2 n=64"]


@pytest.mark.slow  # over a second: the full suite runs it
def test_report_draws_latency_speedups_and_backends_and_one_html_page(tmp_path, run_cli):
    """A two-backend sweep with pairing: both panels, a speedup bar per paired case, the roofline's
    backends told apart, and every chart inlined in report.html."""
    from accelbench.results.reading import read_rows
    from accelbench.results.report import speedups, sweep_series

    rows = []
    for m in (256, 512, 1024):
        jax = row(m, m * 1e-6, tflop_per_s=m * 0.01, gb_per_s=m * 10.0, intensity_flop_per_byte=0.3)
        torch = row(
            m,
            m * 2e-6,
            backend="torch",
            implementation="eager",
            tflop_per_s=m * 0.005,
            gb_per_s=m * 5.0,
            intensity_flop_per_byte=0.3,
            paired_with=f"jax{m}",
        )
        rows += [jax, torch]
    write(tmp_path / "p.csv", rows)
    loaded = read_rows(str(tmp_path / "p.csv"))
    bars = speedups(loaded)["jax_over_torch"]
    assert [b.value for b in bars] == pytest.approx([2.0, 2.0, 2.0])
    assert [b.label for b in bars] == ["256", "512", "1024"]  # what varies among the pairs
    lat = sweep_series(loaded)["add"].latency
    assert sorted(lat) == ["backend=jax", "backend=torch implementation=eager"]
    assert [p[1] for p in lat["backend=torch implementation=eager"]] == pytest.approx(
        [512, 1024, 2048]
    )
    code, out, _ = run_cli("report", str(tmp_path / "p.csv"), "--output-dir", str(tmp_path / "r"))
    assert code == 0 and "speedup_jax_over_torch.png: 3 points" in out
    page = (tmp_path / "r" / "report.html").read_text()
    pngs = sorted(p.name for p in (tmp_path / "r").glob("*.png"))
    assert pngs == ["roofline.png", "speedup_jax_over_torch.png", "sweep_add.png"]
    assert page.count("data:image/png;base64,") == len(pngs) and page.count("<tr") == 1 + len(rows)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from accelbench.results import report

    captured = []
    real = plt.subplots

    def spy(*args, **kwargs):
        fig, ax = real(*args, **kwargs)
        captured.append(ax)
        return fig, ax

    report.plt.subplots = spy
    try:
        report.roofline(loaded, str(tmp_path / "roof.png"))
    finally:
        report.plt.subplots = real
    (points,) = captured[0].collections  # seaborn draws one collection, a path per point
    markers = {tuple(path.vertices.round(2).flatten()) for path in points.get_paths()}
    assert len(points.get_offsets()) == 6 and len(markers) == 2  # one marker shape per backend


def test_speedup_charts_for_torchao_recipes_and_fusion():
    from dataclasses import fields

    from accelbench.errors import Status
    from accelbench.ops.fusion import FusionExtras
    from accelbench.ops.torchao import TorchaoExtras
    from accelbench.results.records import Identity, Row
    from accelbench.results.report import speedups

    def typed(op, suite, params, extras_cls, **extras):
        values = {f.name: None for f in fields(extras_cls)} | extras
        identity = Identity(
            case_id=op + str(len(params)), status=Status.OK, op=op, backend="torch", suite=suite
        )
        return Row(
            identity=identity,
            params={"m": 8, "k": 8, "n": 8, **params},
            extras=extras_cls(**values),
        )

    def torchao(recipe, sparsity, **extras):
        return typed(
            "torchao_inference",
            "quantization",
            {"recipe": recipe, "sparsity": sparsity},
            TorchaoExtras,
            recipe=recipe,
            sparsity=sparsity,
            **extras,
        )

    rows = [
        torchao("baseline", "none", compile_mode="off", eager_speedup_ratio=1.0),
        torchao("baseline", "semi-sparse", compile_mode="off", eager_speedup_ratio=1.1),
        torchao(
            "int8dq",
            "none",
            compile_mode="default",
            compiled_speedup_ratio=1.5,
            eager_speedup_ratio=0.5,
        ),
        typed(
            "fusion_linear", "fusion", {"pattern": "linear_bias"}, FusionExtras, speedup_ratio=1.9
        ),
    ]
    charts = speedups(rows)
    assert [b.value for b in charts["recipe_over_baseline"]] == [
        1.1,
        1.5,
    ]  # compiled rows: compiled
    assert [b.value for b in charts["fused_over_unfused"]] == [1.9]
    assert "jax_over_torch" not in charts


def test_compare_json_lists_every_pair_with_its_test(runs, run_cli):
    import json

    code, out, _ = run_cli("compare", str(runs / "a.csv"), str(runs / "b.csv"), "--json")
    record = json.loads(out)
    assert code == 1 and record["threshold"] == 0.05 and record["failing"] == ["add jax m=1 n=64"]
    verdicts = {p["case"].split()[0]: p for p in record["pairs"]}
    assert len(record["pairs"]) == 3
    assert {p["verdict"] for p in record["pairs"]} >= {"slower"}
    assert all(
        set(p)
        == {
            "case",
            "baseline_median_s",
            "candidate_median_s",
            "ratio",
            "ratio_low",
            "ratio_high",
            "verdict",
            "evidence",
            "rounds",
            "device_state_differs",
        }
        for p in verdicts.values()
    )


def test_sample_intervals_in_batches_are_each_pairs_own():
    """Pairs with like sample counts share one numpy call; each gets the interval it would alone."""
    import numpy as np

    from accelbench.core.samples import ratio_intervals
    from accelbench.results.compare import Pair, sample_intervals
    from accelbench.results.records import Identity, Row, Series

    def side(samples):
        return Row(Identity(op="add"), {}, series=Series(samples_s=list(samples)))

    rng = np.random.default_rng(1)
    sets = [(rng.lognormal(0, 0.2, 12), rng.lognormal(0.1, 0.2, 12)) for _ in range(3)]
    pairs = [Pair(side(a), side(b)) for a, b in sets] + [Pair(side([1.0] * 3), side([2.0] * 3))]
    sample_intervals(pairs)
    for pair, (a, b) in zip(pairs, sets, strict=False):
        alone = ratio_intervals(np.array([a]), np.array([b]))[0]
        assert pair.interval == pytest.approx(tuple(alone))
    assert (
        pairs[3].interval is None
    )  # three samples a side: no interval, the p10-p90 columns decide


@pytest.mark.slow  # 100k rows
def test_a_hundred_thousand_rows_read_typed_with_foreign_cells_read_carefully(tmp_path):
    from accelbench.errors import Status
    from accelbench.results.reading import read_rows

    rows = [row(i, 1e-3 + i * 1e-9) for i in range(100_000)]
    rows[7]["time_median_s"] = "n/a"  # hand-edited: this cell reads as no number, the rest as typed
    rows[8]["m"] = "big"  # a parameter its kind does not take keeps its text
    rows[9]["status"] = ""  # no status is no clean number
    write(tmp_path / "r.csv", rows)
    read = read_rows(str(tmp_path / "r.csv"))
    assert len(read) == 100_000
    # typed as the op declares its parameters, the defaults where the file has no column
    assert type(read[6].params).__name__ == "MatrixParams"
    assert read[6].params.as_dict() == {
        "device": 0,
        "seed": 0,
        "sharding": "none",
        "dtype": "bfloat16",
        "m": 6,
        "n": 64,
    }
    assert read[6].median_s == pytest.approx(1e-3 + 6e-9)
    assert read[7].median_s is None and read[7].stats.time_p10_s is not None
    assert read[8].params.value("m") == "big" and isinstance(read[8].params, ReadParams)  # as read
    assert read[9].status is Status.ERROR and read[10].status is Status.OK


def test_malformed_json_lines_leave_series_readers_can_index(tmp_path):
    import json

    from accelbench.results.reading import read_series

    monitor = [[0.0, 1980.0, 2600.0, 60.0, 300.0], [0.1, 1980.0]]  # the second sample was cut
    lines = [
        json.dumps({"case_id": "a", "samples_s": [1e-3, 2e-3], "gpu_monitor": monitor}),
        json.dumps({"case_id": "b", "kernels": [{"name": "k", "share": "lots"}, {"share": 0.5}]}),
        json.dumps({"case_id": "c", "samples_s": [1e-3, "x"], "device_samples_s": {"0": [1]}}),
        '{"case_id": "d", "samples_s": [NaN, 1.0]}',  # what a foreign writer may spell
        json.dumps({"case_id": "e", "samples_s": [1.0]})[:20],  # a killed run's last line
        '{"case_id": "f", "kernels": [{"name": "k", "per_iter": 1%s}]}' % ("0" * 400),
    ]
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    series = read_series(str(tmp_path / "r.csv"))
    assert series["a"].gpu_monitor == [monitor[0]] and series["a"].samples_s == [1e-3, 2e-3]
    assert [k.share for k in series["b"].kernels] == [0.5]  # typed; the malformed one left out
    assert series["c"].samples_s == [] and series["c"].device_samples_s == {"0": [1]}
    assert len(series["d"].samples_s) == 2
    assert "e" not in series and "f" not in series  # no traceback either


def _hostile_candidate(kind, tmp_path):
    """A candidate results file as issue 28's adversarial run wrote it."""
    path = tmp_path / "hostile.csv"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path = Path("/dev/zero")
    elif kind == "symlink_loop":
        os.symlink(tmp_path / "loop2.csv", tmp_path / "loop1.csv")
        os.symlink(tmp_path / "loop1.csv", tmp_path / "loop2.csv")
        path = tmp_path / "loop1.csv"
    elif kind == "duplicate_header":
        path.write_text("case_id,status,op,backend,time_median_s,op\nc,ok,add,jax,1e-3,add\n")
    elif kind == "short_rows":
        path.write_text(",".join(COLUMNS) + "\nadd1,ok,run,2026\n")
    elif kind == "foreign_column_order":
        path.write_text("host,case_id,status,op,backend,time_median_s\nvm,add1,ok,add,jax,1e-3\n")
    return str(path)


@pytest.mark.parametrize(
    "kind, message",
    [
        ("fifo", "not a regular file"),
        ("dev_zero", "not a regular file"),
        ("symlink_loop", "b"),
        ("duplicate_header", "column 'op' appears twice in the header"),
        ("short_rows", "line 2 has 4 cells under"),
        ("foreign_column_order", ""),
    ],
)
def test_compare_on_hostile_candidates_answers_without_hanging(kind, message, runs, run_cli):
    candidate = _hostile_candidate(kind, runs)
    code, _, err = run_cli("compare", str(runs / "a.csv"), candidate)
    assert code in (1, 2) and "Traceback" not in err
    assert message in err or code == 1
    assert len(err.strip().splitlines()) <= 3


def test_compare_reads_a_spreadsheet_saved_csv_and_a_huge_cell(runs, run_cli):
    text = (runs / "a.csv").read_text()
    (runs / "bom.csv").write_text("\ufeff" + text, encoding="utf-8")
    assert run_cli("compare", str(runs / "a.csv"), str(runs / "bom.csv"))[0] == 0
    write(runs / "huge.csv", [row(1, 1e-3, error="x" * 200_000), row(2, 2e-3), row(3, 3e-3)])
    assert run_cli("compare", str(runs / "a.csv"), str(runs / "huge.csv"))[0] == 0


@pytest.mark.parametrize("impossible", [-1e-3, 0.0, 9e43, 1e308, 1e-320])
def test_impossible_candidate_times_are_no_usable_time_not_a_verdict(impossible, runs, run_cli):
    write(runs / "b.csv", [row(1, impossible), row(2, 2e-3), row(3, 3e-3)])
    code, out, _ = run_cli("compare", str(runs / "a.csv"), str(runs / "b.csv"), "--json")
    pairs = {p["case"].split()[2]: p for p in json.loads(out)["pairs"]}
    assert code == 1
    assert pairs["m=1"]["verdict"] == "no usable time" and pairs["m=1"]["ratio"] is None


def test_a_results_file_not_utf8_says_so_and_a_foreign_twin_is_named(runs, run_cli):
    """A CSV that is not UTF-8: one line with the byte it fails at; a .jsonl twin of random bytes
    beside a good CSV: one warning naming it, and the verdicts from the CSV's p10-p90."""
    good = (runs / "a.csv").read_bytes()
    (runs / "bin.csv").write_bytes(good[:40] + b"\xff\xfe" + good[40:])
    code, _, err = run_cli("compare", str(runs / "a.csv"), str(runs / "bin.csv"))
    assert code == 2 and err.count("\n") == 1
    assert f"{runs / 'bin.csv'}" in err and "not UTF-8 text (byte 40)" in err
    (runs / "b.jsonl").write_bytes(bytes(range(256)) * 8)
    code, out, err = run_cli("compare", str(runs / "a.csv"), str(runs / "b.csv"), "--json")
    warned = [line for line in err.splitlines() if "b.jsonl" in line]
    assert len(warned) == 1 and warned[0].startswith("warning: ")
    assert {p["evidence"] for p in json.loads(out)["pairs"]} == {"p10-p90"}


def test_a_bare_compare_without_two_runs_says_where_it_looked_and_how_to_name_them(
    tmp_path, run_cli
):
    """The runs of a config that writes outside the results folder are not under it: say so."""
    code, _, err = run_cli("compare", "--results-dir", str(tmp_path / "results"))
    assert code == 2 and err.count("\n") == 1
    assert str(tmp_path / "results") in err and "--config" in err


def test_cells_with_newlines_and_markup_stay_text_in_the_report(tmp_path, run_cli):
    hostile = (
        "x\n# heading\n[click](http://e.vil) <script>alert(1)</script> [/x] [link=http://e] &lt;"
    )
    rows = [row(m, m * 1e-6, error=hostile, dtype=hostile) for m in (256, 512)]
    write(tmp_path / "r.csv", rows)
    code, _, err = run_cli("report", str(tmp_path / "r.csv"), "--output-dir", str(tmp_path / "rep"))
    assert code == 0, err
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert "\n# heading" not in summary and "[click](" not in summary  # escaped: \\[click\\](
    assert "&lt;" not in summary.replace("\\&lt;", "")  # an entity stays text (trial 3)
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "<script>" not in page


def test_an_op_name_with_a_slash_names_no_folder_in_the_report(tmp_path, run_cli):
    rows = [{**row(m, m * 1e-6), "op": "../evil/op", "case_id": f"c{m}"} for m in (256, 512)]
    write(tmp_path / "r.csv", rows)
    code, _, err = run_cli("report", str(tmp_path / "r.csv"), "--output-dir", str(tmp_path / "rep"))
    assert code == 0, err
    assert not (tmp_path / "evil").exists()
    assert all(p.parent == tmp_path / "rep" for p in (tmp_path / "rep").rglob("*"))


@pytest.mark.parametrize("where", ["", "/proc/self/no/such"])
def test_a_report_folder_that_cannot_be_made_is_one_line(where, runs, run_cli):
    code, _, err = run_cli("report", str(runs / "a.csv"), "--output-dir", where)
    assert code == 2 and err.startswith(f"error: --output-dir '{where}'") and err.count("\n") == 1


def test_a_report_that_cannot_be_written_is_one_line_exit_1(runs, run_cli, monkeypatch):
    import matplotlib.figure

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    code, _, err = run_cli("report", str(runs / "a.csv"), "--output-dir", str(runs / "rep"))
    assert code == 1
    assert err == (
        f"error: --output-dir '{runs / 'rep'}': cannot write the report: No space left on device\n"
    )


def test_summary_verdicts_read_p10_p90_and_a_loaded_host_only_beyond_its_load(tmp_path, run_cli):
    """Issue 59: without samples, disjoint p10-p90 ranges beyond the threshold are a verdict (a 23x
    slowdown flagged noisy is slower); a host-clock row taken at load 3.5 per core is no verdict
    unless the change is beyond what that load can explain; device time is not host-bound."""
    idle = {"host_load_ratio": 0.3, "timing_source": "wall_clock"}
    busy = {"host_load_ratio": 3.5, "timing_source": "wall_clock"}
    write(tmp_path / "a.csv", [row(m, 1e-3, **idle) for m in (1, 2, 3, 4)])
    write(
        tmp_path / "b.csv",
        [
            row(1, 23e-3, noisy="True", **idle),  # flagged noisy, its range far from the baseline's
            row(2, 2e-3, **busy),  # 2x: a load of 3.5 explains that
            row(3, 23e-3, **busy),  # 23x: beyond what 3.5x could
            row(4, 2e-3, host_load_ratio=3.5, timing_source="xprof_gpu"),  # device time
        ],
    )
    code, out, _ = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--json")
    verdicts = {p["case"].split()[2]: p["verdict"] for p in json.loads(out)["pairs"]}
    assert verdicts["m=1"] == verdicts["m=4"] == "slower"
    assert verdicts["m=2"] == "inconclusive (conditions differ: host load per core 0.30 vs 3.50)"
    assert verdicts["m=3"].startswith("slower (beyond what host load per core 0.30 vs 3.50")
    assert {p["evidence"] for p in json.loads(out)["pairs"]} == {"p10-p90"}
    assert code == 1
    write(tmp_path / "c.csv", [row(m, 2e-3, **busy) for m in (1, 2, 3, 4)])
    code, out, _ = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "c.csv"))
    assert code == 0 and "microbench ab" in out  # the hint: interleave instead


def test_a_load_on_both_sides_is_a_loaded_host_not_a_difference_and_still_bounds_the_ratio(
    tmp_path, run_cli
):
    """Trial finding 5: a file against itself was 'inconclusive (conditions: ...)' with the hint about
    different conditions. One load on both sides is noise ('loaded host'), not a difference, yet it
    bounds the ratio all the same: two runs at one load per core can meet different neighbours (the
    stored A/A pairs of bench/ab_load.py: an 8x interval at 4.86 vs 4.91 per core). And a verdict
    withheld by its own noise says so, not that a differing condition withheld it."""
    busy = {"host_load_ratio": 3.5, "timing_source": "wall_clock"}
    idle = {"host_load_ratio": 0.3, "timing_source": "wall_clock"}
    write(tmp_path / "a.csv", [row(m, 1e-3, **busy) for m in (1, 2, 3)])
    write(tmp_path / "b.csv", [row(1, 1e-3, **busy), row(2, 2e-3, **busy), row(3, 23e-3, **busy)])
    a, b = str(tmp_path / "a.csv"), str(tmp_path / "b.csv")
    for other in (a, b):
        code, out, _ = run_cli("compare", a, other, "--json")
        verdicts = [p["verdict"] for p in json.loads(out)["pairs"]]
        assert not any(CONDITIONS_DIFFER in v or "(conditions:" in v for v in verdicts), verdicts
    loaded = "inconclusive (noisy, loaded host: host load per core 3.50 vs 3.50)"
    assert verdicts[:2] == ["noise", loaded]  # 2x: a load of 3.5 can explain that
    assert verdicts[2].startswith("slower (beyond what host load per core 3.50 vs 3.50")
    _, out, _ = run_cli("compare", a, a)
    assert "hint" not in out  # a file against itself: noise, nothing to interleave
    _, out, _ = run_cli("compare", a, b)
    assert "on a loaded host" in out and "microbench ab" in out
    write(tmp_path / "c.csv", [row(m, 1.2e-3, spread=0.5, **idle) for m in (1, 2, 3)])
    code, out, _ = run_cli("compare", str(tmp_path / "c.csv"), a, "--json")
    assert {p["verdict"] for p in json.loads(out)["pairs"]} == {
        "inconclusive (noisy, loaded host: host load per core 0.30 vs 3.50)"
    }


def test_speedup_bars_of_noisy_rows_are_marked_doubtful():
    from accelbench.results.records import Conditions, Identity, Pairing, Row, TimeStats, TimingInfo
    from accelbench.results.report import speedups

    def made(case_id, backend, median, noisy=False, paired=""):
        return Row(
            identity=Identity(case_id=case_id, op="add", backend=backend),
            params={"m": 8},
            stats=TimeStats(time_median_s=median, noisy=noisy),
            conditions=Conditions(),
            timing=TimingInfo(timing_source="wall_clock"),
            pairing=Pairing(paired_with=paired),
        )

    rows = [made("j", "jax", 1e-3), made("t", "torch", 2e-3, noisy=True, paired="j")]
    (bar,) = speedups(rows)["jax_over_torch"]
    assert bar.value == pytest.approx(2.0) and bar.doubtful


def test_the_summary_notes_warm_rows_whose_working_set_is_about_the_l2s_size(tmp_path):
    from accelbench.results.reading import read_rows
    from accelbench.results.sinks.summary import l2_edge_note

    write(
        tmp_path / "r.csv",
        [
            row(1, 1e-5, cache="warm", working_set_over_l2_ratio=0.96),
            row(2, 1e-5, cache="cold", working_set_over_l2_ratio=0.96),
            row(3, 1e-5, cache="warm", working_set_over_l2_ratio=0.1),
        ],
    )
    rows = read_rows(str(tmp_path / "r.csv"))
    note = l2_edge_note(rows)
    assert note is not None and note.startswith("note: 1 warm-cache rows")
    assert "cache: cold" in note
    assert l2_edge_note(rows[1:]) is None


def _sampled(tmp_path, name, samples, doubt=False):
    """A results file of one case with these raw samples (a noisy or loaded-host row if `doubt`)."""
    import json

    import numpy as np

    median = float(np.median(samples))
    extra = (
        {"noisy": "True", "host_load_ratio": 6.0, "timing_source": "wall_clock"} if doubt else {}
    )
    r = {**row(1, median, spread=0.5), "case_id": "c1", **extra}
    write(tmp_path / f"{name}.csv", [r])
    with open(tmp_path / f"{name}.jsonl", "w") as f:
        f.write(json.dumps({"case_id": "c1", "samples_s": list(map(float, samples))}) + "\n")
    return str(tmp_path / f"{name}.csv")


def test_compare_reads_raw_samples_from_the_documented_count_and_p10_p90_below_it(
    tmp_path, run_cli
):
    """Trial finding 16: with both .jsonl twins but 5 samples the evidence is p10-p90, which the docs
    said happens only where a CSV stands alone. The rule, its number from the code, is in method.md."""
    import numpy as np

    from accelbench.core.samples import ratio_intervals

    # the fewest samples a side needs for a ratio's interval, as the code decides it
    one = [np.ones((1, n)) for n in range(64)]
    fewest = next(n for n in range(64) if ratio_intervals(one[n], one[n]) is not None)
    method = (Path(__file__).parent.parent / "docs" / "method.md").read_text()
    assert f"fewer than {fewest} samples of the case" in method
    for n, evidence in ((fewest - 1, "p10-p90"), (fewest, "raw samples")):
        a = _sampled(tmp_path, f"a{n}", [1e-3 * (1 + i / 100) for i in range(n)])
        b = _sampled(tmp_path, f"b{n}", [2e-3 * (1 + i / 100) for i in range(n)])
        (pair,) = json.loads(run_cli("compare", a, b, "--json")[1])["pairs"]
        assert pair["evidence"] == evidence


@pytest.mark.parametrize("seed", range(5))
def test_the_gate_fails_a_ten_times_slowdown_however_noisy_and_passes_an_a_a_run(
    tmp_path, run_cli, seed
):
    """Issue 45: an 11x slowdown with p = 1e-6 between two noisy, loaded-host rows was 'inconclusive'
    and exit 0. Now the verdict comes from the ratio's 95% interval: wholly beyond the threshold is
    slower (exit 1) whatever the noise; an A/A pair of the same noisy distribution straddles or
    stays inside it and passes (exit 0)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    base = 1e-3 * rng.lognormal(0, 0.4, 40)
    slow = 11e-3 * rng.lognormal(0, 0.4, 40)
    again = 1e-3 * rng.lognormal(0, 0.4, 40)
    a = _sampled(tmp_path, "a", base, doubt=True)
    code, out, _ = run_cli("compare", a, _sampled(tmp_path, "b", slow, doubt=True))
    assert code == 1 and "slower" in out, out
    code, out, _ = run_cli("compare", a, _sampled(tmp_path, "c", again, doubt=True), "--json")
    import json

    (pair,) = json.loads(out)["pairs"]
    assert code == 0 and pair["verdict"].startswith(("inconclusive", "noise", "within threshold"))
    assert pair["ratio_low"] < pair["ratio"] < pair["ratio_high"]


def test_a_report_over_several_sources_keeps_them_apart(tmp_path, run_cli):
    """Issue 45: two runs in one report: a source column in every table, one sweep series per source
    (never a line through both), and no per-case sample charts for plain cases unless asked."""
    import json

    from accelbench.results.reading import read_rows
    from accelbench.results.report import label_sources, sweep_series

    paths = []
    for name, scale in (("before", 1.0), ("after", 2.0)):
        rows = [
            {
                **row(m, m * 1e-6 * scale, gb_per_s=m / scale),
                "run_id": f"{name}run",
                "case_id": f"{name}{m}",
            }
            for m in (256, 512, 1024)
        ]
        path = tmp_path / f"{name}.csv"
        write(path, rows)
        with open(tmp_path / f"{name}.jsonl", "w") as f:
            for r in rows:
                f.write(
                    json.dumps({"case_id": r["case_id"], "samples_s": [r["time_median_s"]] * 64})
                    + "\n"
                )
        paths.append(str(path))
    read = [(p, read_rows(p, series="all")) for p in paths]
    label_sources(read)
    assert {r.source for _, rows in read for r in rows} == {"before.csv", "after.csv"}
    series = sweep_series([r for _, rows in read for r in rows])["add"]
    assert sorted(series.latency) == ["source=after.csv", "source=before.csv"]
    assert all(len(points) == 3 for points in series.latency.values())

    code, out, _ = run_cli("report", *paths, "--output-dir", str(tmp_path / "rep"))
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert (
        code == 0 and "| source" in summary and "before.csv" in summary and "after.csv" in summary
    )
    assert not list((tmp_path / "rep").glob("series_*.png"))  # 64 samples, but no soak
    code, _, _ = run_cli(
        "report", paths[0], "--output-dir", str(tmp_path / "one"), "--sample-charts"
    )
    assert code == 0 and len(list((tmp_path / "one").glob("series_*.png"))) == 3
    assert "| source" not in (tmp_path / "one" / "summary.md").read_text()


def test_compare_json_is_strict_json_and_by_honours_every_format(tmp_path, run_cli):
    """Issue 57: no NaN or Infinity in --json (null instead); --by with --format csv is CSV."""

    def strict(text):
        return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))

    write(tmp_path / "a.csv", [row(1, 1e-3), row(1, 2e-3, backend="torch")])
    write(tmp_path / "b.csv", [row(1, float("inf")), row(1, float("nan"), backend="torch")])
    code, out, _ = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--json")
    assert code == 1 and all(p["ratio"] is None for p in strict(out)["pairs"])
    by = ("compare", str(tmp_path / "a.csv"), "--by", "backend")
    code, out, _ = run_cli(*by, "--format", "csv")
    head, line = list(csv.reader(out.splitlines()))
    assert code == 0 and head == ["case", "jax", "torch"] and line[0] == "add m=1 n=64"
    code, out, _ = run_cli(*by, "--format", "json")
    assert code == 0 and strict(out)["pairs"][0]["case"].endswith("[torch vs jax]")
    code, out, _ = run_cli(*by, "--format", "markdown")
    assert out.startswith("| case | jax | torch |")


def test_a_sustained_round_repeated_is_one_number_not_a_verdict(tmp_path, run_cli):
    """Trial 6: a sustained loop's samples are its rounds' means, each repeated for every iteration.
    One round a side (3.8x apart, zero spread) is no evidence: inconclusive, naming samples; rounds
    that vary give an interval from one value per round."""
    import numpy as np

    one_round = {"a": 0.46e-3, "b": 1.73e-3}
    rounds = {"a": [1.0e-3, 1.02e-3, 0.99e-3] * 4, "b": [1.5e-3, 1.52e-3, 1.49e-3] * 4}
    for name in "ab":
        flat, varied = [one_round[name]] * 20, sorted(rounds[name])
        rows = [
            {**row(m, float(np.median(s)), spread=0.0), "case_id": f"{name}{m}", "cadence": cad}
            for m, s, cad in ((1, flat, "sustained"), (2, varied, "sustained"), (3, flat, ""))
        ]
        write(tmp_path / f"{name}.csv", rows)
        samples = [[v for v in s for _ in range(5)] for s in (flat, rounds[name], flat)]
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(
                json.dumps({"case_id": r["case_id"], "samples_s": s}) + "\n"
                for r, s in zip(rows, samples, strict=True)
            )
        )
    code, out, _ = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"))
    lines = {line.split("│")[1].strip(): line for line in out.splitlines() if "│ add" in line}
    assert "inconclusive (samples:" in lines["add jax m=1 n=64"]
    assert "slower" in lines["add jax m=2 n=64"]  # 12 rounds a side, 1.5x apart
    assert "slower" in lines["add jax m=3 n=64"]  # blocked samples stay as they are
