"""The structure the rest of the code relies on: discovery, registries, one procedure, typed rows, no cycles."""

import ast
import csv
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from accelbench import catalogue, registrations
from accelbench.catalogue import get_spec
from accelbench.errors import CaseFailure, Status
from accelbench.platform.backends import BACKENDS, run_order

PACKAGES = [ROOT / "src" / "accelbench", ROOT / "torch_backend"]


@pytest.mark.parametrize(
    "first_import",
    [
        "accelbench.ops.quantize",
        "torch_backend.ops.gemm",
        "accelbench.ops.fusion",
        "accelbench.catalogue",
    ],
)
def test_the_catalogue_is_complete_whatever_was_imported_first(first_import):
    code = (
        f"import {first_import}\nfrom accelbench.catalogue import get_spec, backends_of\n"
        "print(get_spec('add').name, backends_of('add'), backends_of('fault'), backends_of('torchao_inference'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "add ('jax', 'torch') ('numpy',) ('torch',)"


def test_discovering_the_catalogue_imports_no_framework():
    """Listing ops or refusing a config never imports JAX or PyTorch (how long that takes is a speed
    figure for bench/, not a test: load stretches it)."""
    code = (
        "import sys\nfrom accelbench.catalogue import all_specs\nall_specs()\n"
        "print([m for m in ('jax', 'torch') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


COMPILER_STACK = ("torch._dynamo", "torch._inductor", "sympy", "torch.distributed.fsdp")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("backend", "must_not_import"),
    [
        (["--backend", "torch", "--implementation", "eager"], ("jax", *COMPILER_STACK)),
        (["--backend", "jax"], ("torch",)),
    ],
    ids=["torch-eager", "jax"],
)
def test_a_run_imports_only_what_its_cases_need(tmp_path, backend, must_not_import):
    """Importing the compiler stack cost a GPU machine's eager runs 5 s (torch.profiler pulls it in)."""
    argv = ["microbench", "run", "--run", "add", "--m", "64", "--n", "64", *backend]
    argv += ["--output-dir", str(tmp_path), "-q", "--no-progress"]
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print('LOADED', [m for m in {must_not_import!r} if m in sys.modules]))\n"
        f"sys.argv = {argv!r}\n"
        "from accelbench.entry import entry\nentry()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert list(tmp_path.glob("*.csv")), out.stdout
    assert out.stdout.strip().splitlines()[-1] == "LOADED []"


def test_a_duplicate_op_or_implementation_is_refused():
    spec = get_spec("add")
    with pytest.raises(ValueError, match="op 'add' registered twice"):
        catalogue.register(spec)
    with pytest.raises(ValueError, match="jax implementation 'jit' of op 'add' registered twice"):
        catalogue.array_implementation("add", "jax", "jit")(lambda p: lambda a, b: {})
    with pytest.raises(ValueError, match="unknown backend"):
        catalogue.implementation("add", "tensorflow")(lambda backend, case: None)


def test_the_backend_registry_orders_jax_before_torch_and_says_what_is_available():
    assert sorted(BACKENDS, key=run_order) == ["jax", "numpy", "torch"]
    assert all(
        info.available for info in BACKENDS.values()
    )  # the test environment has every framework
    assert {info.implementations for info in BACKENDS.values()} == {
        "accelbench.ops",
        "torch_backend.ops",
    }


def test_every_op_has_an_implementation_and_every_implementation_an_op():
    specs = catalogue.all_specs()
    assert all(spec.backends for spec in specs.values())
    assert {op for op, _, _ in catalogue.IMPLEMENTATIONS} <= set(specs)


CHECK_CASES = {
    "compute/jax": ("add", "jax", "{m: 16, n: 16}"),
    "compute/torch": ("add", "torch", "{m: 16, n: 16, implementation: eager}"),
    "faults/numpy": ("fault", "numpy", "{n: 8}"),
    "fusion/torch": ("fusion_linear", "torch", "{m: 8, k: 16, n: 8, device: cpu}"),
    "elementwise/torch": ("elementwise", "torch", "{batch: 1, seq: 4, hidden: 16, device: cpu}"),
}


@pytest.mark.parametrize("suite", sorted(CHECK_CASES))
def test_check_modes_hold_in_every_suite(suite, tmp_path, monkeypatch, run_cli):
    """off: no check at all; flag: a wrong result is timed and flagged; strict: it is not timed."""
    from accelbench.measure import procedure

    op, backend, params = CHECK_CASES[suite]
    monkeypatch.chdir(tmp_path)
    rows = {}
    for mode in ("off", "flag", "strict"):
        (tmp_path / "c.yaml").write_text(
            f"benchmarks:\n- benchmark_name: {op}\n  backend: {backend}\n"
            f"  num_runs: 2\n  warmup: 0\n  check: {mode}\n  csv_path: {mode}.csv\n"
            f"  benchmark_params: [{params}]\n"
        )
        with monkeypatch.context() as patch:
            if mode != "off":  # every output is wrong: the check itself reports it
                original = procedure.run_check

                def always_wrong(m, prepared, out, original=original):
                    prepared.check = lambda out: (_ for _ in ()).throw(
                        CaseFailure(Status.WRONG_RESULT, "injected mismatch")
                    )
                    return original(m, prepared, out)

                patch.setattr(procedure, "run_check", always_wrong)
            run_cli("run", "--config", "c.yaml", "--no-progress")
        (rows[mode],) = list(csv.DictReader(open(tmp_path / f"{mode}.csv")))
    assert (rows["off"]["status"], rows["off"]["check"], rows["off"]["check_mode"]) == (
        "ok",
        "off",
        "off",
    )
    assert (
        rows["flag"]["status"] == "wrong_result"
        and rows["flag"]["check"] == "flagged: injected mismatch"
    )
    assert float(rows["flag"]["time_median_s"]) > 0
    assert rows["strict"]["status"] == "wrong_result" and rows["strict"]["time_median_s"] == ""


def test_columns_come_from_the_typed_row_and_undeclared_extras_fail():
    from accelbench.ops.common import PlacementExtras
    from accelbench.ops.fusion import FusionExtras
    from accelbench.results.columns import header
    from accelbench.results.row_builder import check_extras

    cols = header(["m"], [PlacementExtras, FusionExtras])
    assert {"used_device_count", "sharding", "fusion_verdict", "speedup_ratio"} <= set(cols)

    @dataclasses.dataclass
    class Stray:
        surprise: int = 1

    with pytest.raises(TypeError, match="declares PlacementExtras"):
        check_extras(get_spec("add"), Stray())
    with pytest.raises(TypeError):
        check_extras(get_spec("add"), {"used_device_count": 1})
    check_extras(get_spec("add"), PlacementExtras(1, "none"))


def test_the_writer_refuses_a_column_its_header_lacks(tmp_path):
    from accelbench.errors import Status
    from accelbench.results.records import Environment, Identity, Row
    from accelbench.results.writer import ResultFile

    identity = Identity("c", "r", "", Status.OK, "", "s", "b", "o", "numpy", None, "l")
    f = ResultFile(str(tmp_path / "o.csv"), ["case_id"], "cfg", resume=False)
    with pytest.raises(ValueError, match="header lacks"):
        f.append(Row(identity=identity, params={"m": 1}, environment=Environment()))


def _module_name(path: Path) -> str:
    for base in (ROOT / "src", ROOT):
        if base in path.parents:
            parts = path.relative_to(base).with_suffix("").parts
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise ValueError(path)


def _imports(path: Path, known: set[str]) -> set[str]:
    """Project modules imported anywhere in the file (module level and inside functions)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found |= {n for n in names if n in known}
    return found


def test_no_import_cycles_among_the_projects_modules():
    files = [p for pkg in PACKAGES for p in pkg.rglob("*.py")]
    modules = {_module_name(p): p for p in files}
    graph = {name: _imports(path, set(modules)) - {name} for name, path in modules.items()}
    for name in list(graph):  # importing a.b.c runs a and a.b first
        graph[name] |= {
            n for n in graph[name] for parent in [n.rsplit(".", 1)[0]] if parent in graph
        } - {name}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                raise AssertionError(
                    "import cycle: " + " -> ".join(stack[stack.index(nxt) :] + [nxt])
                )
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node)


NAME_KEYS = {
    "op",
    "name",
    "pattern",
    "recipe",
    "model_type",
    "implementation",
    "suite",
    "operation",
    "dialect",
    "benchmark",
    "generation",
    "command",
    "group",
    "tier",
    "backend",
}


def _key(node: ast.AST) -> str | None:
    """The name a comparison tests: `op`, `case.op`, `p["op"]`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    return None


def _conditions(tree: ast.AST) -> list[ast.AST]:
    """Every expression that decides something: if/while tests, ternaries, comprehension filters,
    and each side of an and/or among them."""
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            found.append(node.test)
        elif isinstance(node, ast.comprehension):
            found.extend(node.ifs)
    out: list[ast.AST] = []
    while found:
        node = found.pop()
        if isinstance(node, ast.BoolOp):
            found.extend(node.values)
        elif isinstance(node, ast.UnaryOp):
            found.append(node.operand)
        else:
            out.append(node)
    return out


def _dispatches(path: Path) -> list[str]:
    """`<name-like> == "literal"` tests, wherever a condition hides them: dispatch on names that a table
    should do instead."""
    hits = []
    for test in _conditions(ast.parse(path.read_text())):
        if not isinstance(test, ast.Compare) or not isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
            continue
        if _key(test.left) in NAME_KEYS and any(
            isinstance(c, ast.Constant) and isinstance(c.value, str) for c in test.comparators
        ):
            hits.append(f"{path.relative_to(ROOT)}:{test.lineno}")
    return hits


def test_dispatch_on_names_is_done_by_tables():
    hits = [h for pkg in PACKAGES for p in pkg.rglob("*.py") for h in _dispatches(p)]
    assert len(hits) <= 8, hits  # a few one-off special cases, never a chain


def test_the_dispatch_finder_sees_names_hidden_in_conditions(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "x = 1 if op == 'a' else 2\n"
        "y = [c for c in cs if c.op != 'b']\n"
        "if ready and p['recipe'] == 'c':\n    pass\n"
        "while not (name == 'd' or go):\n    pass\n"
    )
    from pathlib import Path as _P

    import test_architecture as me

    original = me.ROOT
    me.ROOT = _P(tmp_path)
    try:
        assert len(_dispatches(sample)) == 4
    finally:
        me.ROOT = original


# Lower layers first; a package may import its own layer and those below, never one above.
LAYERS = (
    (
        "accelbench.errors",
        "accelbench.names",
        "accelbench.limits",
        "accelbench.registry",
        "accelbench.plugins",
    ),
    ("accelbench.platform", "accelbench.specs"),
    ("accelbench.core",),
    ("accelbench.catalogue",),
    ("accelbench.measure",),
    ("accelbench.ops",),
    ("accelbench.results",),
    ("accelbench.config",),
    ("accelbench.jax_backend", "accelbench.numpy_backend", "torch_backend"),
    ("accelbench.run",),
    ("accelbench.benchmarks",),  # the reference harness's benchmarks, both generations
    ("accelbench.dialects",),  # each dialect's planner, outputs and command line, over all of these
    ("accelbench.cli", "accelbench.__main__", "accelbench"),
)
# the seeds' Python entry points run whole configs: they sit with the CLI, above everything
ENTRY_POINTS = (
    "torch_backend.entry",
    "torch_backend.benchmark_runner",
    "torch_backend.ci_microbenchmark_runner",
    "torch_backend.fusion",
    "torch_backend.elementwise",
)


def _layer(module: str) -> int:
    if module in ENTRY_POINTS:
        return len(LAYERS) - 1
    best = -1, ""
    for i, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > len(best[1]):
                best = i, name
    return best[0]


def test_no_package_imports_one_above_it():
    files = [p for pkg in PACKAGES for p in pkg.rglob("*.py")]
    modules = {_module_name(p): p for p in files}
    upward = []
    for name, path in modules.items():
        mine = _layer(name)
        assert mine >= 0, f"{name} is in no layer"
        for imported in _imports(path, set(modules)):
            if _layer(imported) > mine:
                upward.append(f"{name} -> {imported}")
    assert upward == []


COLUMN_HOMES = (
    "results/records.py",
    "results/row_builder.py",
    "results/roofline.py",
    "results/columns.py",
    "results/column_docs.py",
    "results/writer.py",
    "results/reading.py",
    "results/display.py",  # a table column's machine name is the row's column it shows
    "results/run_store.py",  # the run record, a JSON format of its own
    "results/sinks/",
    "results/tpums_metrics.py",  # TPUMS's summary.csv names (an upstream format, as the sinks')
)


def _column_names() -> set[str]:
    from accelbench.results.columns import BODY, ENVIRONMENT, IDENTITY

    names = set(IDENTITY) | set(BODY) | set(ENVIRONMENT)
    for spec in catalogue.all_specs().values():
        if spec.row_extras is not None:
            names |= {f.name for f in dataclasses.fields(spec.row_extras)}
    return names


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def test_readers_name_columns_through_the_typed_row():
    """Outside the row and sink modules, results/ and run/ read rows by attribute, not by column
    name; the few string literals left are display titles and identity field names."""
    names = _column_names()
    src = ROOT / "src" / "accelbench"
    hits = []
    for path in [*(src / "results").rglob("*.py"), *(src / "run").rglob("*.py")]:
        relative = str(path.relative_to(src))
        if relative.startswith(COLUMN_HOMES):
            continue
        tree = ast.parse(path.read_text())
        docs = _docstrings(tree)
        hits += [
            f"{relative}:{node.lineno} {node.value}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in docs
        ]
    assert len(hits) <= 24, hits


def test_op_specs_carry_typed_traits_not_a_dict():
    from accelbench.catalogue import OpSpec, Traits

    assert "extra" not in {f.name for f in dataclasses.fields(OpSpec)}
    assert all(isinstance(s.traits, Traits) for s in catalogue.all_specs().values())
    gets = [
        f"{p.relative_to(ROOT)}:{node.lineno}"
        for pkg in PACKAGES
        for p in pkg.rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in ("extra", "traits_dict")
    ]
    assert gets == []


def test_an_op_registered_in_a_scope_is_gone_after_it():
    spec = dataclasses.replace(get_spec("add"), name="only")
    with registrations.scoped():
        catalogue.register(spec)
        catalogue.add_implementation(
            catalogue.ArrayImplementation("only", "jax", "jit", lambda p: 0)
        )
        assert catalogue.all_specs()["only"] == spec and catalogue.backends_of("only") == ("jax",)
    assert "only" not in catalogue.all_specs() and catalogue.backends_of("only") == ()


ARCHITECTURE = ROOT / "docs" / "architecture.md"
SRC = ROOT / "src" / "accelbench"
# every package of the project, by the head of the row that documents it
DOCUMENTED_PACKAGES = {
    "platform": SRC / "platform",
    "specs": SRC / "specs",
    "core": SRC / "core",
    "measure": SRC / "measure",
    "ops": SRC / "ops",
    "results": SRC / "results",
    "config": SRC / "config",
    "run": SRC / "run",
    "benchmarks": SRC / "benchmarks",
    "dialects": SRC / "dialects",
    "jax_backend": SRC / "jax_backend",
    "torch_backend": ROOT / "torch_backend",
}


def _layer_rows() -> list[list[str]]:
    page = ARCHITECTURE.read_text(encoding="utf-8")
    layers = page.split("## Layers", 1)[1].split("\n## ", 1)[0]
    return [line.split("|")[1:-1] for line in layers.splitlines() if line.startswith("| `")]


def test_the_architecture_page_lists_every_module_in_its_layer():
    """docs/architecture.md stays true: every module of every package (its subpackages' too) is named
    in the row of its package, and the top row names every top-level module."""
    rows = {cells[0].strip(): cells[1] for cells in _layer_rows()}
    for package, folder in DOCUMENTED_PACKAGES.items():
        row = next(text for head, text in rows.items() if f"`{package}/`" in head)
        named = set(re.findall(r"`([a-z_0-9]+)(?:\.py|/)?`", row))
        actual = {p.stem for p in folder.rglob("*.py") if p.stem != "__init__"}
        actual |= {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
        assert actual <= named, (package, sorted(actual - named))
    top = next(head for head in rows if "`cli.py`" in head)
    named_top = set(re.findall(r"`([a-z_]+)\.py`", top))
    actual_top = {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"}
    listed_elsewhere = {h.strip("` ") for head in rows for h in re.findall(r"`[a-z_]+\.py`", head)}
    assert actual_top <= named_top | {n.removesuffix(".py") for n in listed_elsewhere}
    for head in rows:  # every file the page names exists
        for name in re.findall(r"`([a-z_/]+\.py)`", head):
            assert (SRC / name).exists() or (ROOT / name).exists(), name


def test_every_registration_and_sink_method_the_page_names_exists():
    page = ARCHITECTURE.read_text(encoding="utf-8")
    points = page.split("## Extension points", 1)[1].split("\n## ", 1)[0]
    import accelbench.benchmarks.base
    import accelbench.catalogue
    import accelbench.config.dialects
    import accelbench.measure.timers
    import accelbench.ops.common
    import accelbench.ops.torchao
    import accelbench.platform.backends
    import accelbench.results.sinks
    import accelbench.specs
    import torch_backend.arrays

    modules = (
        accelbench.catalogue,
        accelbench.config.dialects,
        accelbench.measure.timers,
        accelbench.ops.common,
        accelbench.benchmarks.base,
        accelbench.ops.torchao,
        accelbench.benchmarks.base,
        accelbench.platform.backends,
        accelbench.specs,
        accelbench.results.sinks,
        torch_backend.arrays,
    )
    for name in set(
        re.findall(r"`@?((?:register|array_implementation|implementation)\w*)\(", points)
    ):
        assert any(hasattr(m, name) for m in modules), name
    sink_row = next(line for line in points.splitlines() if line.startswith("| an output format"))
    methods = re.findall(r"`(\w+)`", sink_row.split("a `Sink` (", 1)[1].split(")", 1)[0])
    assert methods and all(hasattr(accelbench.results.sinks.Sink, m) for m in methods), methods


@pytest.mark.slow
def test_every_name_a_bench_script_imports_from_the_project_exists():
    """bench/ runs on the GPU machine only: a renamed registry broke a script there unseen."""
    import importlib

    missing = []
    for script in sorted((ROOT / "bench").glob("*.py")):
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            if node.module.split(".")[0] not in ("accelbench", "torch_backend"):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                if not hasattr(module, alias.name):
                    try:
                        importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        missing.append(f"{script.name}: {node.module}.{alias.name}")
    assert not missing


MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60


def test_modules_and_functions_stay_small():
    """No module over 600 lines and no function over 60: a module holds one concept, a function one
    step (tables are data and sit at module level, where this does not count them)."""
    files = [
        *(p for pkg in PACKAGES for p in pkg.rglob("*.py")),
        *(ROOT / "Ironwood").rglob("*.py"),
    ]
    long_modules = [
        f"{p.relative_to(ROOT)}: {n}"
        for p in files
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    long_functions = [
        f"{p.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
        for p in files
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long_modules == [] and long_functions == [], (long_modules, long_functions)


def test_op_parameters_are_read_by_attribute_never_by_string():
    """An op's parameters are a typed dataclass, not a mapping: no reader in the product takes one by
    a string key (`params["m"]`, `params.get("device")`, `value("m")`); placement is `placement`."""
    from accelbench.catalogue import OpParams

    assert not hasattr(OpParams, "__getitem__") and not hasattr(OpParams, "get")
    pattern = re.compile(r"""params\s*\[\s*["']|params\.get\(\s*["']|\.value\(\s*["']""")
    hits = [
        f"{p.relative_to(ROOT)}:{n}"
        for pkg in PACKAGES
        for p in pkg.rglob("*.py")
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == []


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["run", "--help"], ["validate", "--max-cases", "many", "--config", "x.yaml"]],
    ids=["help", "run-help", "argument-error"],
)
def test_help_and_argument_errors_load_no_schema_and_no_catalogue(argv):
    """The command line is built from every dialect's declaration, whose heavy parts load on first
    use: its help and its argument errors import neither pydantic nor the op catalogue (how long
    they take is a figure for the docs, not a test: load stretches it)."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('LOADED', [m for m in ('pydantic', 'accelbench.catalogue',"
        " 'numpy') if m in sys.modules]))\n"
        f"sys.argv = ['microbench', *{argv!r}]\n"
        "from accelbench.entry import entry\nentry()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode in (0, 2), out.stderr
    assert out.stdout.strip().splitlines()[-1] == "LOADED []"


def test_the_list_of_commands_loads_no_command_s_machinery():
    """`microbench --help` names the commands and reads none of their options: no case declarations,
    no comparison formats, no run store, no process plumbing (subprocess, ctypes, socket)."""
    heavy = (
        "accelbench.core.case",
        "accelbench.results.compare_formats",
        "accelbench.results.sinks",
        "accelbench.run.store_commands",
        "subprocess",
        "ctypes",
        "socket",
        "difflib",
        "datetime",
        "xml.etree",
        "hashlib",
        "json",
    )
    code = (  # what the interpreter's own start-up loaded (a sitecustomize) is not ours
        "import atexit, sys\nbefore = set(sys.modules)\n"
        f"atexit.register(lambda: print('LOADED', [m for m in {heavy!r} if m in sys.modules"
        " and m not in before]))\n"
        "sys.argv = ['microbench', '--help']\n"
        "from accelbench.entry import entry\nentry()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "LOADED []"
