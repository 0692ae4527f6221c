"""Where the program finds the dialects (subpackages of `accelbench.dialects`, or packages named under
that entry point group) and the output modules they bring: imported once, on first need, so a lower
layer asks for them without depending on any."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys

DIALECT_PACKAGE = "accelbench.dialects"
ENTRY_POINT_GROUP = "accelbench.dialects"  # another distribution's dialects: name = "package"

# the output formats' modules that dialects bring (imported before the sinks are listed)
SINK_MODULES: list[str] = []
_discovered = False


def discover_dialects() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True
    package = importlib.import_module(DIALECT_PACKAGE)
    for found in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if found.ispkg:
            importlib.import_module(f"{DIALECT_PACKAGE}.{found.name}")
    for module in installed(ENTRY_POINT_GROUP):
        importlib.import_module(module)


def import_sink_modules() -> None:
    discover_dialects()
    for name in SINK_MODULES:
        importlib.import_module(name)


def installed(group: str) -> list[str]:
    """The modules installed distributions name under an entry point group, read from each
    `*.dist-info/entry_points.txt` (importlib.metadata would cost `--help` a third of its time)."""
    found: dict[str, None] = {}
    for folder in dict.fromkeys(sys.path):
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for name in (n for n in names if n.endswith(".dist-info")):
            try:
                with open(os.path.join(folder or ".", name, "entry_points.txt")) as f:
                    lines = [line.strip() for line in f]
            except OSError:
                continue
            section = ""
            for line in lines:
                if line.startswith("["):
                    section = line.strip("[]").strip()
                elif section == group and "=" in line and not line.startswith(("#", ";")):
                    found.setdefault(line.partition("=")[2].strip().partition(":")[0].strip())
    return list(found)
