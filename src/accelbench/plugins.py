"""Where the program finds what plugs into it by name: the reference dialects (each a subpackage of
`accelbench.dialects`, or a package another distribution names under the `accelbench.dialects` entry
point group) and the output modules they bring. Imported by name, once, on first need: a lower layer
asks for them without depending on any."""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points

DIALECT_PACKAGE = "accelbench.dialects"
ENTRY_POINT_GROUP = "accelbench.dialects"  # another distribution's dialects: name = "package"

# modules of output formats that a dialect brings (its registration names them; imported before the
# sinks are listed)
SINK_MODULES: list[str] = []
_discovered = False


def discover_dialects() -> None:
    """Import every dialect package (each registers itself), ours first, then installed ones."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    package = importlib.import_module(DIALECT_PACKAGE)
    for found in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if found.ispkg:
            importlib.import_module(f"{DIALECT_PACKAGE}.{found.name}")
    for point in entry_points(group=ENTRY_POINT_GROUP):
        importlib.import_module(point.value)


def import_sink_modules() -> None:
    discover_dialects()
    for name in SINK_MODULES:
        importlib.import_module(name)
