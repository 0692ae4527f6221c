"""User-facing errors: one line, naming the file and the key, exit code 2."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """Closest known name to a misspelt one, or None when nothing is close."""
    matches = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return matches[0] if matches else None


def key_path(*parts: object) -> str:
    """Render ('benchmarks', 0, 'm') as 'benchmarks[0].m'."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class UserError(Exception):
    """Input the user can fix. The CLI prints str(self) and exits with code 2."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        key: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.key = key
        self.suggestion = suggestion
        super().__init__(str(self))

    def with_file(self, file: str) -> UserError:
        """The same error, attributed to a config file (keeps an existing attribution)."""
        if self.file is None:
            self.file = file
        return self

    def __str__(self) -> str:
        where = ": ".join(p for p in (self.file, self.key) if p)
        text = f"{where}: {self.message}" if where else self.message
        if self.suggestion:
            text += f" (did you mean '{self.suggestion}'?)"
        return " ".join(text.split())  # one line, always


class CaseFailure(Exception):
    """A case that cannot produce a clean row; becomes a row with this status."""

    def __init__(self, status: str, reason: str) -> None:
        self.status = status
        self.reason = " ".join(str(reason).split())
        super().__init__(f"{status}: {self.reason}")


def unsupported(reason: str) -> CaseFailure:
    return CaseFailure("unsupported", reason)


def wrong_result(reason: str) -> CaseFailure:
    return CaseFailure("wrong_result", reason)
