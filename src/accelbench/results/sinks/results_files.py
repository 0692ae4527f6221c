"""The rows themselves: one `ResultFile` per results file however its path is spelt."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from accelbench.catalogue import get_spec
from accelbench.core.case import Case
from accelbench.results.columns import header
from accelbench.results.reading import read_rows
from accelbench.results.records import Row, identifying_columns, recorded_setting
from accelbench.results.remote import DIR_FIELDS
from accelbench.results.sinks import RunContext, Sink, register_sink
from accelbench.results.writer import ResultFile, check_writable


@register_sink("results", order=0)
class ResultFiles(Sink):
    def __init__(self, context: RunContext) -> None:
        self.cases = context.cases
        self.options = context.options
        self.files: dict[str, ResultFile] = {}  # a case's csv_path as written -> its file
        self.read_back: dict[str, dict[str, Row]] = {}  # a file's finished rows by case, once read

    def open(self) -> None:
        by_file: dict[str, list[Case]] = defaultdict(list)
        for case in self.cases:
            by_file[os.path.realpath(case.outputs.csv_path)].append(case)
        for group in by_file.values():
            check_writable(group[0].outputs.csv_path)
            twin = str(Path(group[0].outputs.csv_path).with_suffix(".jsonl"))
            check_writable(twin, key="csv_path's .jsonl twin")
        for case in self.cases:  # the run's output folders too, before the first case
            for name in DIR_FIELDS:
                if folder := getattr(case.outputs, name):
                    check_writable(folder, name, folder=True)
        try:
            for group in by_file.values():
                params = dict.fromkeys(p for case in group for p in case.params.as_dict())
                extras = dict.fromkeys(get_spec(case.op).row_extras for case in group)
                asked: dict[tuple[str, str], set[Any]] = defaultdict(set)
                for case in group:
                    for column, setting in identifying_columns().items():
                        asked[case.benchmark, column].add(recorded_setting(case.run, setting))
                shared = ResultFile(
                    group[0].outputs.csv_path,
                    header(params, extras),
                    group[0].config_id,
                    self.options.resume,
                    self.options.overwrite,
                    asked,
                )
                self.files.update({case.outputs.csv_path: shared for case in group})
        except BaseException:
            self.close([], interrupted=True)
            raise

    def holds(self, case: Case) -> bool:
        """In its own file: a case that two benchmarks write to two files is done in each apart."""
        return case.id in self.files[case.outputs.csv_path].done

    def stored(self, case: Case) -> Row | None:
        path = case.outputs.csv_path
        if path not in self.read_back:
            rows = read_rows(path, series="all") if self.holds(case) else []
            self.read_back[path] = {r.identity.case_id: r for r in rows}
        return self.read_back[path].get(case.id)

    def row(self, case: Case, row: Row) -> None:
        self.files[case.outputs.csv_path].append(row)

    def close(self, rows: list[Row], interrupted: bool) -> None:
        for f in set(self.files.values()):
            f.close()

    def locations(self) -> list[str]:
        return sorted({str(f.csv_path) for f in self.files.values()})
