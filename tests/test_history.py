"""history: one series per case over the stored runs in commit order, steps found at the right commit
and nowhere else, its formats, --bisect, stores read through URLs, publish and --baseline latest."""

import csv
import hashlib
import json
import subprocess

import numpy as np
import pytest

from accelbench.results.change_points import steps
from accelbench.results.columns import header

COLUMNS = header(["m", "n", "dtype"])
STEP_AT = 37  # the first commit after the 4% step


def _write_run(folder, n, commit, date, medians, name=None, device=""):
    """Run n of series r.csv: one row per (m, median), and its record naming the code's commit."""
    path = folder / ("r.csv" if n == 1 else f"r.{n}.csv")
    with open(path, "w", newline="") as f:
        out = csv.DictWriter(f, COLUMNS)
        out.writeheader()
        for i, (m, median) in enumerate(medians.items() if isinstance(medians, dict) else medians):
            out.writerow(
                {"case_id": f"c{m}-{i}", "status": "ok", "op": "add", "backend": "jax", "m": m,
                 "n": 64, "dtype": "bfloat16", "time_median_s": median, "device_kind": device,
                 "time_p10_s": median * 0.99, "time_p90_s": median * 1.01}
            )  # fmt: skip
    record = folder / ("r.run.json" if n == 1 else f"r.{n}.run.json")
    git = {"commit": commit, "date": date}
    record.write_text(
        json.dumps(
            {
                "name": name,
                "started": f"2026-12-01T00:{n:02d}:00",
                "files": [str(path)],
                "config": str(folder / "c.yaml"),
                "environment": {"git": {"commit": "harness", "date": "2020-01-01"}},
                "tested": git,
            }
        )  # fmt: skip
    )


def _store(folder, commits, seed=0, step=0.04, at=STEP_AT):
    """Runs over `commits` (oldest first, one run each): case m=1 steps by `step` at commit `at`;
    all three cases drift 2% over the whole store and carry 0.5-1% noise."""
    rng = np.random.default_rng(seed)
    folder.mkdir(exist_ok=True)
    (folder / "c.yaml").write_text("benchmarks: []\n")  # what ran: ab's --config
    for i, commit in enumerate(commits):
        drift = 1 + 0.02 * i / len(commits)
        medians = {
            m: base * drift * np.exp(rng.normal(0, noise)) * (1 + step if m == 1 and i >= at else 1)
            for m, base, noise in ((1, 1e-3, 0.005), (2, 2e-3, 0.01), (3, 5e-6, 0.008))
        }
        _write_run(folder, i + 1, commit, f"2026-11-{1 + i // 3:02d}T{i % 3:02d}:00:00", medians)
    return folder


COMMITS = [hashlib.sha1(str(i).encode()).hexdigest()[:12] for i in range(60)]


@pytest.mark.parametrize("seed", range(5))
def test_a_four_percent_step_is_found_at_its_commit_and_no_step_elsewhere(seed, tmp_path, run_cli):
    store = _store(tmp_path / "results", COMMITS, seed)
    code, out, err = run_cli("history", "--results-dir", str(store), "--format", "json")
    assert code == 0, err
    found = {h["case"]: h for h in json.loads(out)}
    assert sorted(found) == [f"add jax m={m} n=64" for m in (1, 2, 3)]
    assert [len(h["points"]) for h in found.values()] == [60, 60, 60]
    (step,) = found["add jax m=1 n=64"]["steps"]
    assert step["first_after"]["commit"] == COMMITS[STEP_AT]
    assert step["last_before"]["commit"] == COMMITS[STEP_AT - 1]
    assert 1.025 < step["ratio"] < 1.055 and step["low"] < step["ratio"] < step["high"]
    assert not found["add jax m=2 n=64"]["steps"] and not found["add jax m=3 n=64"]["steps"]


def test_no_false_step_in_pure_noise_and_drift():
    rng = np.random.default_rng(7)
    false = sum(
        len(steps(list(np.exp(np.linspace(0, 0.02, 60) + rng.normal(0, 0.01, 60)))))
        for _ in range(300)
    )
    assert false <= 3  # method.md: under 1% of such series


def test_points_are_ordered_by_commit_date_not_by_run_number(tmp_path, run_cli):
    store = tmp_path / "results"
    store.mkdir()
    _write_run(store, 1, "bbb", "2026-11-02", {1: 2e-3})
    _write_run(store, 2, "aaa", "2026-11-01", {1: 1e-3}, name="older")
    code, out, _ = run_cli("history", "--results-dir", str(store), "--format", "csv")
    lines = list(csv.DictReader(out.splitlines()))
    assert [(r["commit"], r["label"]) for r in lines] == [("aaa", "older"), ("bbb", "1")]
    assert float(lines[0]["median_s"]) == 1e-3 and "conditions" in lines[0]


def test_a_case_a_run_holds_twice_is_one_point_the_median_of_its_rows(tmp_path, run_cli):
    """Trial finding 17: two entries made one case (--max-dim) are one run, so one point, not two."""
    store = tmp_path / "results"
    store.mkdir()
    _write_run(store, 1, "aaa", "2026-11-01", [(1, 1e-3), (1, 3e-3), (1, 2.5e-3)])
    _write_run(store, 2, "bbb", "2026-11-02", [(1, 2e-3), (1, 4e-3)])
    code, out, _ = run_cli("history", "--results-dir", str(store), "--format", "json")
    (found,) = json.loads(out)
    assert [(p["label"], p["median_s"]) for p in found["points"]] == [("1", 2.5e-3), ("2", 3e-3)]


def test_a_change_of_device_is_two_histories_not_a_step(tmp_path, run_cli):
    store = tmp_path / "results"
    store.mkdir()
    for i in range(12):
        device, median = ("NVIDIA H100", 2e-3) if i < 6 else ("NVIDIA H200", 1e-3)
        _write_run(store, i + 1, COMMITS[i], f"2026-11-{i + 1:02d}", {1: median}, device=device)
    code, out, _ = run_cli("history", "--results-dir", str(store), "--format", "json")
    found = {h["case"]: h for h in json.loads(out)}
    assert sorted(found) == ["add jax m=1 n=64 on NVIDIA H100", "add jax m=1 n=64 on NVIDIA H200"]
    assert all(len(h["points"]) == 6 and not h["steps"] for h in found.values())


def test_case_filter_since_and_each_format(tmp_path, run_cli):
    store = _store(tmp_path / "results", COMMITS)
    for flag in ("--case", "--filter"):
        code, out, _ = run_cli(
            "history", "--results-dir", str(store), flag, "*m=2*", "--format", "json"
        )
        assert [h["case"] for h in json.loads(out)] == ["add jax m=2 n=64"]
    code, out, _ = run_cli(
        "history", "--results-dir", str(store), "--since", "2026-11-19", "--format", "json"
    )
    assert {len(h["points"]) for h in json.loads(out)} == {6}  # the runs of the 19th and 20th
    code, out, _ = run_cli("history", "--results-dir", str(store), "--format", "markdown")
    assert out.startswith("| case | points |") and f"at {COMMITS[STEP_AT]}, after" in out
    code, out, _ = run_cli("history", "--results-dir", str(store))
    assert code == 0 and "add jax m=1 n=64" in out and COMMITS[STEP_AT] in out
    code, _, err = run_cli("history", "--results-dir", str(store), "--case", "nothing*")
    assert code == 2 and "no case has a point" in err


def _repo(path, count):
    """A git checkout with `count` commits; their 12-character hashes, oldest first."""
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for i in range(count):
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", f"c{i}"], check=True)
    out = subprocess.run([*git, "rev-list", "--reverse", "--abbrev=12", "--abbrev-commit", "HEAD"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return out.stdout.split()


@pytest.mark.slow
def test_bisect_lists_the_commits_inside_a_step_and_the_ab_command_for_each(tmp_path, run_cli):
    commits = _repo(tmp_path / "repo", 121)
    measured = commits[::2]  # a nightly that ran every other commit: a step spans two commits
    store = _store(tmp_path / "results", measured)
    code, out, err = run_cli(
        "history", "--results-dir", str(store), "--bisect", "--repo", str(tmp_path / "repo")
    )
    assert code == 0, err
    good, bad = measured[STEP_AT - 1], measured[STEP_AT]
    assert f"between {good} and {bad}: 2 commit(s)" in out
    between = commits[commits.index(good) + 1 : commits.index(bad) + 1]
    for commit in between:
        assert f"microbench ab {good} {commit} --config {store / 'c.yaml'}" in out
    assert len([line for line in out.splitlines() if "microbench ab" in line]) == len(between)
    code, _, err = run_cli(
        "history", "--results-dir", str(store), "--bisect", "--repo", str(tmp_path)
    )
    assert code == 2 and "--repo" in err  # not a checkout: one line


def test_a_store_is_read_through_file_and_other_urls_and_published_runs_feed_compare(
    tmp_path, run_cli, monkeypatch
):
    store = _store(tmp_path / "results", COMMITS[:12], step=0)
    code, out, _ = run_cli("history", "--results-dir", f"file://{store}", "--format", "json")
    assert code == 0 and len(json.loads(out)[0]["points"]) == 12
    code, out, _ = run_cli("runs", "--results-dir", f"file://{store}", "--json")
    assert code == 0 and [r["tested"] for r in json.loads(out)] == COMMITS[:12]
    monkeypatch.chdir(tmp_path)
    for run in ("3", "latest"):
        code, out, err = run_cli(
            "publish", run, "--to", "memory://bucket/nightly", "--results-dir", str(store)
        )
        assert code == 0, err
    code, out, err = run_cli(
        "history", "--results-dir", "memory://bucket/nightly", "--format", "json"
    )
    assert code == 0, err
    assert [p["commit"] for p in json.loads(out)[0]["points"]] == [COMMITS[2], COMMITS[11]]
    # tomorrow's candidate against the latest published run of its series
    _write_run(tmp_path, 1, "new", "2026-12-02", {1: 2e-3, 2: 2e-3, 3: 5e-6})
    code, out, err = run_cli(
        "compare", "--results-dir", "memory://bucket/nightly", "--baseline", "latest", "r.csv"
    )
    assert code == 1 and "slower" in out  # m=1 doubled
    code, out, err = run_cli("compare", f"file://{store}/r.12.csv", "r.csv")
    assert code == 1 and "slower" in out
    code, _, err = run_cli(
        "publish", "99", "--to", str(tmp_path / "out"), "--results-dir", str(store)
    )
    assert code == 2 and "names no stored run" in err
    code, out, err = run_cli(
        "publish", "1", "--to", str(tmp_path / "out"), "--results-dir", str(store)
    )
    assert code == 0 and (tmp_path / "out").is_dir()
    code, _, err = run_cli("history", "--results-dir", "nosuchproto://x/y")
    assert code == 2 and "--results-dir" in err


def test_the_report_draws_each_case_s_history_with_its_steps_and_names_points_on_hover(
    tmp_path, run_cli
):
    store = _store(tmp_path / "results", COMMITS)
    code, out, err = run_cli("report", str(store), "--output-dir", str(tmp_path / "report"))
    assert code == 0, err
    assert "history.png: 180 points" in out  # three cases of 60 runs
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert (
        "## History" in summary
        and f"at {COMMITS[STEP_AT]}, after {COMMITS[STEP_AT - 1]}" in summary
    )
    page = (tmp_path / "report" / "report.html").read_text()
    assert page.count("<area shape='circle'") == 180 and "usemap='#map" in page
    assert f"at {COMMITS[STEP_AT]} (2026-11-13T01:00:00), run {STEP_AT + 1}" in page


def test_history_and_publish_take_a_config_s_runs(tmp_path, run_cli):
    store = _store(tmp_path / "results", COMMITS[:8], step=0)
    (store / "c.yaml").write_text(  # the config the records name: its series is results/r.csv
        "backend: numpy\nbenchmarks:\n- benchmark_name: fault\n"
        f"  csv_path: {store / 'r.csv'}\n  benchmark_params: [{{n: 8}}]\n"
    )
    code, out, err = run_cli("history", "--config", str(store / "c.yaml"), "--format", "csv")
    assert code == 0, err
    assert len(out.splitlines()) == 1 + 3 * 8
    code, out, err = run_cli(
        "publish", "2", "--config", str(store / "c.yaml"), "--to", str(tmp_path / "pub")
    )
    assert code == 0, err
    (record,) = (tmp_path / "pub").rglob("*.run.json")
    assert json.loads(record.read_text())["files"] == ["r.2.csv"]


def test_bad_input_is_one_line(tmp_path, run_cli, monkeypatch):
    store = _store(tmp_path / "results", COMMITS[:6], step=0)
    code, out, err = run_cli("history", "--results-dir", str(store), "--since", "last week")
    assert code == 2 and not out and err.count("\n") == 1 and "--since" in err
    from fsspec.implementations.memory import MemoryFileSystem

    def refused(*args, **kwargs):
        raise PermissionError("bucket refuses")

    monkeypatch.setattr(MemoryFileSystem, "put_file", refused)
    code, _, err = run_cli("publish", "1", "--to", "memory://b/x", "--results-dir", str(store))
    assert code == 1 and "could not publish" in err and "PermissionError" in err


def test_text_from_files_reaches_no_output_as_control_codes(tmp_path, run_cli):
    store = tmp_path / "results"
    store.mkdir()
    for i in range(6):
        path = store / ("r.csv" if i == 0 else f"r.{i + 1}.csv")
        with open(path, "w", newline="") as f:
            out = csv.DictWriter(f, COLUMNS)
            out.writeheader()
            out.writerow(
                {
                    "case_id": "c",
                    "status": "ok",
                    "op": "evil\x1b]8;;x\x07",
                    "backend": "jax",
                    "time_median_s": 1e-3,
                }
            )
        (store / path.name.replace(".csv", ".run.json")).write_text(
            json.dumps(
                {"files": [str(path)], "tested": {"commit": f"c{i}", "date": f"2026-11-0{i + 1}"}}
            )
        )
    for fmt in ("table", "csv", "markdown", "json"):
        code, out, err = run_cli("history", "--results-dir", str(store), "--format", fmt)
        assert code == 0 and "\x1b" not in out and "\x07" not in out, (fmt, err)
    code, _, err = run_cli("report", str(store), "--output-dir", str(tmp_path / "rep"))
    assert code == 0, err
    for page in ("summary.md", "report.html"):
        text = (tmp_path / "rep" / page).read_text(errors="surrogateescape")
        assert "\x1b" not in text and "\x07" not in text


def test_a_store_folder_named_like_markup_is_shown_as_written(tmp_path, run_cli):
    store = _store(tmp_path / "[red]r", COMMITS[:2], step=0)
    code, out, err = run_cli("runs", "--results-dir", str(store))
    assert code == 0, err
    assert "[red]r" in out  # the runs table's title: rich would have read it as markup
    empty = tmp_path / "[bold]e"
    empty.mkdir()
    code, out, _ = run_cli("runs", "--results-dir", f"{empty}\x1b[31m")
    assert "\x1b" not in out
