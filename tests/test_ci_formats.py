"""compare --format github (job-summary Markdown, checked in a Markdown renderer) and --format junit
(checked against the Jenkins xunit plugin's JUnit schema, tests/data/junit/), exit codes, and
--fail-inconclusive."""

import csv
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

DATA = Path(__file__).parent.parent / "docs" / "data"
SCHEMA = Path(__file__).parent / "data" / "junit" / "junit-10.xsd"
SLOWED = 1.2


def _slowed_copy(tmp_path):
    """Real H200 rows (docs/data) as the baseline, and a copy whose first case is 20% slower in
    every sample, its trace in a bucket."""
    base = tmp_path / "base.csv"
    shutil.copy(DATA / "h200_jax_targets_run1.csv", base)
    shutil.copy(DATA / "h200_jax_targets_run1.jsonl", tmp_path / "base.jsonl")
    with open(base, newline="") as f:
        rows = list(csv.DictReader(f))
    slow = rows[0]["case_id"]
    for name, value in rows[0].items():
        if name.startswith("time_") and name.endswith("_s") and value:
            rows[0][name] = str(float(value) * SLOWED)
    rows[0]["trace_path"] = "gs://bucket/traces/run 2"
    with open(tmp_path / "new.csv", "w", newline="") as f:
        out = csv.DictWriter(f, list(rows[0]))
        out.writeheader()
        out.writerows(rows)
    lines = [json.loads(line) for line in open(tmp_path / "base.jsonl")]
    for line in lines:
        if line["case_id"] == slow:
            line["samples_s"] = [s * SLOWED for s in line["samples_s"]]
    (tmp_path / "new.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return base, tmp_path / "new.csv", len(rows)


def test_github_summary_renders_with_the_regression_first(tmp_path, run_cli):
    base, new, count = _slowed_copy(tmp_path)
    code, out, _ = run_cli("compare", str(base), str(new), "--format", "github", "--sort", "case")
    assert code == 1
    html = MarkdownIt("commonmark").enable("table").render(out)
    assert "<strong>Regression</strong>: 1 slower of" in html
    first_table = html.split("<tbody>")[1].split("</tbody>")[0]
    assert "slower" in first_table.split("</tr>")[0] and first_table.count("<tr>") == 1
    details = html.split("<details>")[1]
    assert details.count("<tr>") == count + 1  # the heading row and every case
    assert 'href="gs://bucket/traces/run%202"' in html
    code, out, _ = run_cli("compare", str(base), str(base), "--format", "github")
    assert code == 0 and "**No regression**" in out and "<details>" in out


def test_junit_passes_the_schema_with_one_test_case_per_case(tmp_path, run_cli):
    import xmlschema

    base, new, count = _slowed_copy(tmp_path)
    code, out, _ = run_cli("compare", str(base), str(new), "--format", "junit")
    assert code == 1
    xmlschema.XMLSchema(str(SCHEMA)).validate(out)
    suite = ET.fromstring(out)
    assert suite.get("tests") == str(count) and suite.get("failures") == "1"
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert len(failed) == 1 and failed[0].find("failure").get("type") == "slower"
    code, out, _ = run_cli("compare", str(base), str(base), "--format", "junit")
    assert code == 0 and xmlschema.XMLSchema(str(SCHEMA)).is_valid(out)


def _inconclusive(tmp_path):
    """A case whose rows are noisy: no verdict, unless --fail-inconclusive names the reason."""
    from test_compare_report import row, write

    write(tmp_path / "a.csv", [row(1, 1e-3, spread=0.3, noisy="true", iqr_over_median_ratio=0.3)])
    write(tmp_path / "b.csv", [row(1, 1.2e-3, spread=0.3, noisy="true", iqr_over_median_ratio=0.3)])
    return str(tmp_path / "a.csv"), str(tmp_path / "b.csv")


@pytest.mark.parametrize("reasons, code", [(None, 0), ("noisy", 1), ("all", 1), ("conditions", 0)])
def test_which_inconclusive_reasons_fail_is_a_flag(reasons, code, tmp_path, run_cli):
    a, b = _inconclusive(tmp_path)
    flag = ["--fail-inconclusive", reasons] if reasons else []
    got, out, _ = run_cli("compare", a, b, "--format", "junit", *flag)
    assert got == code
    case = ET.fromstring(out).find("testcase")
    assert case.find("failure" if code else "skipped") is not None


def test_a_misspelt_inconclusive_reason_is_refused_not_a_gate_turned_off(tmp_path, run_cli):
    a, b = _inconclusive(tmp_path)
    code, out, err = run_cli("compare", a, b, "--fail-inconclusive", "noisy,nosiy")
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert "--fail-inconclusive: 'nosiy'" in err and "did you mean 'noisy'" in err
    for empty in ("", ","):  # an unset CI variable: refused too, not a gate silently off
        code, out, err = run_cli("compare", a, b, "--fail-inconclusive", empty)
        assert code == 2 and err.strip().endswith(
            "--fail-inconclusive: names no reason (give all or some of them)"
        )


def test_the_github_headline_never_calls_unjudged_cases_no_regression(tmp_path, run_cli):
    """Trial finding 6: 'No regression: none slower' headed a table whose case was inconclusive."""
    a, b = _inconclusive(tmp_path)
    code, out, _ = run_cli("compare", a, b, "--format", "github")
    assert code == 0 and "No regression" not in out
    assert "**No verdict** for 1 of 1 cases (inconclusive)." in out
    from test_compare_report import row, write

    write(tmp_path / "a.csv", [row(1, 1e-3, spread=0.3), row(2, 1e-3)])
    write(tmp_path / "b.csv", [row(1, 1.2e-3, spread=0.3), row(2, 1e-3)])
    code, out, _ = run_cli("compare", a, b, "--format", "github")
    assert code == 0 and "No regression" not in out
    assert "**No verdict** for 1 of 2 cases (inconclusive); none of the other 1 slower by" in out


def test_cannot_compare_is_exit_2_in_every_ci_format(tmp_path, run_cli):
    a, _ = _inconclusive(tmp_path)
    for fmt in ("github", "junit"):
        code, out, err = run_cli("compare", a, str(tmp_path / "missing.csv"), "--format", fmt)
        assert code == 2 and not out and "missing.csv" in err
