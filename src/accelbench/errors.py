"""What can go wrong: input the user can fix (`UserError`: one line naming the file and the key, exit
code 2) and a case that cannot produce a clean number (`CaseFailure`, a row with its `Status`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum

from accelbench.limits import MAX_QUOTED

MAX_LINE = 6 * MAX_QUOTED  # an error line, however many values it quotes


class Status(str, Enum):
    """A row's outcome: the only spellings of a status anywhere in the code."""

    OK = "ok"
    WRONG_RESULT = "wrong_result"  # the output failed its reference check
    UNSUPPORTED = "unsupported"  # the platform, framework or package cannot run this case
    OOM = "oom"
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # the case's process died (--isolate)
    ERROR = "error"

    @property
    def failed(self) -> bool:  # no number where one was due (unsupported: the platform cannot)
        return self not in (Status.OK, Status.UNSUPPORTED)


def counted(n: int, noun: str) -> str:  # '1 case', '2 cases'
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    word = str(word)
    if len(word) > MAX_QUOTED:  # no name is that long, and difflib is quadratic in it
        return None
    import difflib  # only where a name is unknown

    matches = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    return matches[0] if matches else None


def first_line(error: BaseException, limit: int = 300) -> str:
    """An exception's first line (its type's name where it says nothing), cut to `limit`."""
    text = str(error).strip()
    return text.splitlines()[0][:limit] if text else type(error).__name__


def key_path(*parts: object) -> str:
    """('benchmarks', 0, 'm') as 'benchmarks[0].m'."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f"{'.' if out else ''}{part}"
    return out


class UserError(Exception):
    """Input the user can fix. The CLI prints str(self) and exits with code 2."""

    exit_code = 2
    # a user's value is quoted this far; an error naming our own path, further
    word_limit = MAX_QUOTED

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        key: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        self.message, self.file, self.key, self.suggestion = message, file, key, suggestion
        super().__init__(str(self))

    def with_file(self, file: str) -> UserError:
        self.file = file if self.file is None else self.file
        return self

    def __str__(self) -> str:
        where = ": ".join(p for p in (self.file, self.key) if p)
        text = f"{where}: {self.message}" if where else self.message
        if self.suggestion:
            text += f" (did you mean '{self.suggestion}'?)"
        return bounded(text, self.word_limit)


# C0 and C1 controls (ESC starts escape sequences), DEL, the bidirectional overrides (text shown in
# another order than it reads), and the lone surrogates a file name that is not UTF-8 decodes to
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def visible(text: str) -> str:
    """Text as it may be shown on a terminal: each control character spelt out (`\\x1b`), none obeyed."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def bounded(text: str, word_limit: int = MAX_QUOTED) -> str:
    """One short line, no control obeyed: words past `word_limit` cut (saying how long), the line too."""
    text = visible(" ".join(str(text).split()))
    words = [
        w if len(w) <= word_limit else f"{w[: word_limit - 20]}...({len(w):,} characters)"
        for w in str(text).split()
    ]
    line = " ".join(words)
    most = MAX_LINE + word_limit - MAX_QUOTED
    return line if len(line) <= most else line[: most - 3] + "..."


class CaseFailure(Exception):
    """A case that cannot produce a clean row: a row with this status."""

    def __init__(self, status: Status, reason: str) -> None:
        self.status = Status(status)
        self.reason = " ".join(str(reason).split())
        super().__init__(f"{self.status.value}: {self.reason}")


def unsupported(reason: str) -> CaseFailure:
    return CaseFailure(Status.UNSUPPORTED, reason)


def wrong_result(reason: str) -> CaseFailure:
    return CaseFailure(Status.WRONG_RESULT, reason)
