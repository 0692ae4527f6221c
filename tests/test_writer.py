import csv
import json

import pytest

from accelbench.errors import Status, UserError
from accelbench.ops.common import PlacementExtras
from accelbench.results.columns import ENVIRONMENT, IDENTITY, STATS, header
from accelbench.results.records import Environment, Identity, Row, Series, TimeStats
from accelbench.results.writer import ResultFile


def test_header_is_the_stable_ordered_union():
    cols = header(["m", "n", "m", "case_id"], [PlacementExtras])
    assert cols[: len(IDENTITY)] == list(IDENTITY)
    assert cols[len(IDENTITY) : len(IDENTITY) + 2] == ["m", "n"]
    assert cols[len(IDENTITY) + 2] == STATS[0]
    assert cols[-len(ENVIRONMENT) :] == list(ENVIRONMENT)
    assert len(cols) == len(set(cols))


def _row(case_id, samples=None, **stats):
    identity = Identity(
        case_id=case_id,
        run_id="r",
        timestamp="",
        status=Status.OK,
        error="",
        suite="s",
        benchmark="b",
        op="o",
        backend="numpy",
        implementation=None,
        label=case_id,
    )
    return Row(
        identity=identity,
        params={"m": 1},
        stats=TimeStats(**stats),
        environment=Environment(config_id="cfg"),
        series=Series(samples_s=samples or []),
    )


def test_nothing_is_written_before_the_first_row_and_rows_append_whole(tmp_path):
    path = tmp_path / "sub" / "out.csv"
    unused = ResultFile(str(path), header(["m"], []), "cfg", resume=False)
    assert path.stat().st_size == 0  # held (it is the lock), empty until a row arrives
    unused.close()
    assert not path.exists() and not path.with_suffix(".jsonl").exists()  # nothing left behind
    f = ResultFile(str(path), header(["m"], []), "cfg", resume=False)
    f.append(_row("a", [1e-6, 2e-6], time_median_s=1.5e-6))
    rows = list(csv.DictReader(open(path)))
    assert [r["case_id"] for r in rows] == ["a"] and rows[0]["time_median_s"] == "1.5e-06"
    f.append(_row("b"))
    assert [r["case_id"] for r in csv.DictReader(open(path))] == ["a", "b"]
    lines = [json.loads(line) for line in open(path.with_suffix(".jsonl"))]
    assert lines[0]["samples_s"] == [1e-6, 2e-6] and lines[1]["case_id"] == "b"


def test_a_results_folder_removed_mid_run_is_made_again_and_a_file_put_there_is_kept(tmp_path):
    import shutil

    path = tmp_path / "sub" / "out.csv"
    f = ResultFile(str(path), header(["m"], []), "cfg", resume=False)
    f.append(_row("a"))
    shutil.rmtree(tmp_path / "sub")
    f.append(_row("b"))  # the folder made again, holding every row so far
    assert [r["case_id"] for r in csv.DictReader(open(path))] == ["a", "b"]
    assert [json.loads(line)["case_id"] for line in open(path.with_suffix(".jsonl"))] == ["a", "b"]
    path.unlink()
    path.write_text("someone else's\n")
    with pytest.raises(UserError, match="removed or replaced"):
        f.append(_row("c"))
    assert path.read_text() == "someone else's\n"
    f.close()


def test_resume_reads_done_ids_and_drops_a_torn_last_line(tmp_path):
    path = tmp_path / "out.csv"
    cols = header(["m"], [])
    f = ResultFile(str(path), cols, "cfg", resume=False)
    f.append(_row("a"))
    with open(path, "a") as fh:
        fh.write("b,half a ro")  # a writer killed mid-line
    f.close()
    again = ResultFile(str(path), cols, "cfg", resume=True)
    assert again.done == {"a"}
    assert path.read_text().endswith("\n") and "half a ro" not in path.read_text()
    again.append(_row("c"))
    assert [r["case_id"] for r in csv.DictReader(open(path))] == ["a", "c"]


def test_resume_refuses_a_file_with_other_columns(tmp_path):
    path = tmp_path / "out.csv"
    first = ResultFile(str(path), header(["m"], []), "cfg", resume=False)
    first.append(_row("a"))
    first.close()
    with pytest.raises(UserError, match="different columns"):
        ResultFile(str(path), header(["m", "n"], []), "cfg", resume=True)


def test_an_existing_file_is_refused_and_replaced_only_on_request_when_the_first_row_lands(
    tmp_path,
):
    path = tmp_path / "out.csv"
    path.write_text("old\n")
    with pytest.raises(
        UserError, match="the results file exists; continue it with --resume, replace it"
    ):
        ResultFile(str(path), header(["m"], []), "cfg", resume=False)
    f = ResultFile(str(path), header(["m"], []), "cfg", resume=False, overwrite=True)
    assert path.read_text() == "old\n"
    f.append(_row("a"))
    assert [r["case_id"] for r in csv.DictReader(open(path))] == ["a"]


def test_a_file_in_use_by_another_run_is_refused_naming_it(tmp_path):
    import os

    path = tmp_path / "out.csv"
    first = ResultFile(str(path), header(["m"], []), "cfg", resume=False)
    with pytest.raises(UserError, match=f"in use by another run \\(process {os.getpid()}\\)"):
        ResultFile(str(path), header(["m"], []), "cfg", resume=False)
    first.close()
    ResultFile(str(path), header(["m"], []), "cfg", resume=False).close()


@pytest.mark.parametrize("content", ["", "case_id,ru", "\xff\xfe\x00binary"])
def test_resume_on_an_empty_cut_or_unreadable_file(tmp_path, content):
    path = tmp_path / "out.csv"
    path.write_bytes(content.encode("latin-1"))
    if content.startswith("\xff"):
        with pytest.raises(UserError, match="not a readable CSV"):
            ResultFile(str(path), header(["m"], []), "cfg", resume=True)
        return
    f = ResultFile(str(path), header(["m"], []), "cfg", resume=True)
    f.append(_row("a"))
    lines = path.read_text().splitlines()
    assert lines[0].startswith("case_id,") and len(lines) == 2  # the header repaired, one row


def test_integral_floats_are_written_exactly():
    from accelbench.results.writer import _cell

    assert _cell(134217728.0) == "134217728"  # a byte count keeps every digit
    assert _cell(2.5e-06) == "2.5e-06" and _cell(float("nan")) == ""
    assert _cell(1e300) == "1e+300"  # beyond exact integers: significant digits


def test_one_file_under_two_spellings_is_one_lock_and_no_lock_file_is_left(tmp_path):
    path = tmp_path / "out.csv"
    first = ResultFile(str(path), header(["m"], []), "cfg", resume=False)
    first.append(_row("a"))
    (tmp_path / "alias.csv").hardlink_to(path)
    with pytest.raises(UserError, match=r"in use by another run \(process \d+\)"):
        ResultFile(
            str(tmp_path / "alias.csv"), header(["m"], []), "cfg", resume=False, overwrite=True
        )
    assert [r["case_id"] for r in csv.DictReader(open(path))] == ["a"]  # nothing truncated
    first.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alias.csv", "out.csv", "out.jsonl"]


def test_a_results_file_that_is_a_link_or_not_a_file_is_refused(tmp_path):
    import os

    target = tmp_path / "victim.txt"
    target.write_text("precious")
    (tmp_path / "link.csv").symlink_to(target)
    with pytest.raises(UserError, match="symbolic link"):
        ResultFile(
            str(tmp_path / "link.csv"), header(["m"], []), "cfg", resume=False, overwrite=True
        )
    for resume in (False, True):  # said as it is, whatever the flags (not "the file exists")
        with pytest.raises(UserError, match="link.csv is a symbolic link"):
            ResultFile(str(tmp_path / "link.csv"), header(["m"], []), "cfg", resume=resume)
    (tmp_path / "twin.jsonl").symlink_to(target)  # the rows' twin alone: named as itself
    with pytest.raises(UserError, match="twin.jsonl is a symbolic link"):
        ResultFile(str(tmp_path / "twin.csv"), header(["m"], []), "cfg", resume=False)
    assert target.read_text() == "precious" and not (tmp_path / "twin.csv").exists()
    os.mkfifo(tmp_path / "pipe.csv")
    with pytest.raises(UserError):
        ResultFile(
            str(tmp_path / "pipe.csv"), header(["m"], []), "cfg", resume=False, overwrite=True
        )
    with pytest.raises(UserError, match="JSON-lines twin takes the .jsonl name"):
        ResultFile(str(tmp_path / "rows.jsonl"), header(["m"], []), "cfg", resume=False)


def test_resume_with_the_csv_gone_keeps_the_twin(tmp_path):
    path = tmp_path / "out.csv"
    f = ResultFile(str(path), header(["m"], []), "cfg", resume=False)
    f.append(_row("a"))
    f.close()
    twin = path.with_suffix(".jsonl").read_text()
    path.unlink()
    with pytest.raises(UserError, match="the CSV is missing but out.jsonl holds rows"):
        ResultFile(str(path), header(["m"], []), "cfg", resume=True)
    assert path.with_suffix(".jsonl").read_text() == twin


def _two_rows(tmp_path):
    """out.csv and its twin holding cases a and b, closed; and their columns."""
    path, twin = tmp_path / "out.csv", tmp_path / "out.jsonl"
    cols = header(["m"], [])
    f = ResultFile(str(path), cols, "cfg", resume=False)
    f.append(_row("a"))
    f.append(_row("b"))
    f.close()
    return path, twin, cols


@pytest.mark.parametrize("lines", ["first_cut", "foreign"])
def test_resume_refuses_rows_whose_raw_samples_are_lost_and_leaves_the_twin(tmp_path, lines):
    """The line is written before the row, so no kill leaves a row without one: a cut or foreign
    line is a damaged twin, refused (not resumed as done, its samples gone for good)."""
    path, twin, cols = _two_rows(tmp_path)
    first, second = twin.read_text().splitlines()
    damaged = {"first_cut": f"{first[:-40]}\n{second}\n", "foreign": '{"case_id": "x"}\n'}[lines]
    twin.write_text(damaged)
    lost = {"first_cut": 1, "foreign": 2}[lines]
    with pytest.raises(UserError, match=f"out.jsonl holds no raw samples for {lost} of the 2 rows"):
        ResultFile(str(path), cols, "cfg", resume=True)
    assert twin.read_text() == damaged


def test_a_refused_resume_changes_no_byte_of_either_file(tmp_path):
    """The torn-line cut comes after every check: a refusal never costs a finished row."""
    path, twin, cols = _two_rows(tmp_path)
    for name in ("out.csv", "out.jsonl"):  # a last line whole but for its newline
        (tmp_path / name).write_bytes((tmp_path / name).read_bytes()[:-1])
    before = {p: p.read_bytes() for p in (path, twin)}
    with pytest.raises(UserError, match="written by a different config"):
        ResultFile(str(path), cols, "other", resume=True)
    assert {p: p.read_bytes() for p in (path, twin)} == before
    path.write_bytes(before[path] + b"\n")  # both rows whole; b's line alone lacks its newline
    with pytest.raises(UserError, match="holds no raw samples for 1 of the 2 rows"):
        ResultFile(str(path), cols, "cfg", resume=True)
    assert twin.read_bytes() == before[twin]


def test_resume_repairs_the_json_lines_in_place_keeping_every_finished_case(tmp_path):
    path, twin, cols = _two_rows(tmp_path)
    first, second = twin.read_text().splitlines()
    # killed between the two writes of a case twice: a duplicate line, an orphan, a torn end
    twin.write_text(f"{first}\n{first}\n{second}\n" + '{"case_id": "c"}\n{"case_id": "d", "sam')
    again = ResultFile(str(path), cols, "cfg", resume=True)
    again.close()
    assert [json.loads(line)["case_id"] for line in twin.read_text().splitlines()] == ["a", "b"]
    torn = twin.read_text() + '{"case_id": "e", "sam'  # the usual repair only cuts the end
    twin.write_text(torn)
    ResultFile(str(path), cols, "cfg", resume=True).close()
    assert twin.read_text() == torn[: torn.rindex('{"case_id": "e"')]


def test_resuming_drops_a_json_line_whose_case_is_no_string_and_keeps_the_first_of_each_case(
    tmp_path,
):
    path = tmp_path / "out.csv"
    f = ResultFile(str(path), header(["m"], []), "cfg", resume=False)
    f.append(_row("a", [1.0]))
    f.close()
    twin = path.with_suffix(".jsonl")
    first = twin.read_text()
    twin.write_text(first + '{"case_id": []}\n' + first.replace("[1.0]", "[2.0]") + '{"case_id"')
    again = ResultFile(str(path), header(["m"], []), "cfg", resume=True)  # no traceback
    again.close()
    assert twin.read_text() == first and again.done == {"a"}
