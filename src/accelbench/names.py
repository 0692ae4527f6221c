"""File names made from text: portable, inside the folder they are joined to, never shared by two inputs."""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path

from accelbench.errors import UserError, visible

MAX_NAME = 100  # leaves room under any file system's 255 bytes for `.<n>.run.json` and the like
_PORTABLE = re.compile(r"[^A-Za-z0-9._-]+")  # POSIX's portable file name characters
# what this function appends, and the run store's `<series>.<n>` numbering: no given name passes as one
_TAKEN = re.compile(r"-[0-9a-f]{8}$|\.[0-9]+$")
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode's control characters (category Cc)
_DEVICE = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)  # Windows'


def portable_name(text: str, limit: int = MAX_NAME) -> str:
    """`text` itself where already portable (`[A-Za-z0-9._-]`, not leading `.`/`-`, no `.<digits>`
    end, 1 to `limit` long); else its readable part, `-` and 8 hex digits of its hash (distinct)."""
    text = str(text)
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    readable = _PORTABLE.sub("_", plain).lstrip(".-")
    kept = text == readable and 0 < len(text) <= limit
    if kept and not _TAKEN.search(text) and not _DEVICE.match(text):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    head = readable[: max(1, limit - 9)].rstrip("-.") or "unnamed"
    return f"{head}-{digest}"


def names_no_file(path: str) -> bool:
    """Where a results file is asked for: empty, a folder's spelling (`dir/`) or an existing folder."""
    return not path.strip() or path.endswith(("/", os.sep)) or os.path.isdir(path)


PATH_MAX = 4096  # PATH_MAX on Linux
NAME_MAX = 255  # NAME_MAX: one file or folder name


def check_path_text(path: str, key: str) -> None:
    """A path no system call takes, or a name that carries control characters into every listing."""
    if "\0" in path:
        raise UserError("a path cannot contain a NUL character", key=f"{key} {path!r}")
    if CONTROL.search(path):
        raise UserError(
            "an output path cannot contain a control character",
            key=f"{key} {visible(path)}",
        )
    if len(path) > PATH_MAX:
        raise UserError(f"the path is longer than {PATH_MAX} characters", key=key)
    if len(path) * 4 > NAME_MAX and any(  # every name fits where the whole path does
        len(part.encode(errors="surrogateescape")) > NAME_MAX for part in Path(path).parts
    ):
        raise UserError(f"a name in the path is longer than {NAME_MAX} bytes", key=key)
