"""The package's shape (issue 15): small classes and functions, strategy names
compared only inside the strategy registry."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "pp_decomp").rglob("*.py")) + sorted((ROOT / "models").rglob("*.py"))
MAX_CLASS, MAX_FUNCTION = 250, 60


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _lines(node: ast.AST) -> int:
    return node.end_lineno - node.lineno + 1


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{node.lineno} {getattr(node, 'name', '')}"


@pytest.mark.parametrize("kind,limit", [(ast.ClassDef, MAX_CLASS), (ast.FunctionDef, MAX_FUNCTION)])
def test_no_class_or_function_over_its_size_limit(kind, limit):
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if kind is ast.FunctionDef else (kind,)
    too_long = [
        f"{_where(path, node)} ({_lines(node)} lines)"
        for path in SOURCES
        for node in ast.walk(_tree(path))
        if isinstance(node, kinds) and _lines(node) > limit
    ]
    assert not too_long, f"over {limit} lines: {too_long}"


def test_strategy_names_are_compared_only_in_the_registry():
    from pp_decomp.strategies import STRATEGIES

    names = set(STRATEGIES)
    registry = ROOT / "pp_decomp" / "strategies"
    found = []
    for path in SOURCES:
        if registry in path.parents:
            continue
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            consts = [o for o in operands if isinstance(o, ast.Constant)]
            consts += [
                e for o in operands if isinstance(o, ast.Tuple | ast.Set | ast.List) for e in o.elts
            ]
            if any(isinstance(c, ast.Constant) and c.value in names for c in consts):
                found.append(_where(path, node))
    assert not found, f"strategy names compared outside pp_decomp/strategies: {found}"


def test_the_size_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION + 1))
    node = ast.parse(f"def f():\n{body}\n").body[0]
    assert _lines(node) > MAX_FUNCTION


def test_tests_are_laid_out_like_the_package():
    rooms = {p.name for p in (ROOT / "pp_decomp").iterdir() if (p / "__init__.py").exists()}
    rooms.add("problems")  # the shipped problems (models/) and their domains
    folders = {p.parent.name for p in (ROOT / "tests").rglob("test_*.py")} - {"tests"}
    assert folders <= rooms, f"test folders that are not package rooms: {folders - rooms}"


HISTORY = re.compile(
    r"±|\b(19|20)\d\d-\d\d-\d\d\b|earlier default|\b(January|February|March|April|May|June|"
    r"July|August|September|October|November|December) (19|20)\d\d\b",
    re.IGNORECASE,
)
DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _history_in_docstrings(paths) -> list[str]:
    """Docstring lines carrying evidence or history (docs/design.md, "Why these defaults")."""
    found = []
    for path in paths:
        for node in ast.walk(_tree(path)):
            doc = ast.get_docstring(node, clean=False) if isinstance(node, DOCUMENTED) else None
            for line in (doc or "").splitlines():
                if HISTORY.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)} {line}")
    return found


def test_docstrings_teach_and_keep_figures_and_history_in_the_design_notes(tmp_path):
    package = [p for p in SOURCES if p.is_relative_to(ROOT / "pp_decomp")]
    assert _history_in_docstrings(package) == []  # models/ may name the days of their data
    probe = ROOT / "pp_decomp" / ".probe_docstring.py"
    try:  # the check sees each kind of history
        probe.write_text(
            '"""Mean 1.2 ± 0.3."""\n\n\ndef f():\n    """The earlier default, 2026-11-25."""\n'
        )
        assert len(_history_in_docstrings([probe])) == 2
    finally:
        probe.unlink(missing_ok=True)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> tuple[set[str], list[str]]:
    """The pp_decomp modules ``path`` imports (each with the packages Python imports
    on the way), and where it imports one inside a function."""
    name, tree = _module_name(path), _tree(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    local = {id(n) for f in ast.walk(tree) if isinstance(f, FUNCTIONS) for n in ast.walk(f)}
    found, inside = set(), []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        targets = [t for t in targets if t.split(".")[0] == "pp_decomp"]
        if not targets:
            continue
        if id(node) in local:
            inside.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        for t in targets:
            parts = t.split(".")
            for k in range(2, len(parts) + 1):  # the packages on the way, then the module
                m = ".".join(parts[:k])
                if m in modules and m != name and not name.startswith(m + "."):
                    found.add(m)
    return found, inside


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
PACKAGE = [p for p in SOURCES if p.is_relative_to(ROOT / "pp_decomp")]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while not comp or comp[-1] != v:
                comp.append(stack.pop())
                on.discard(comp[-1])
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_pp_decomp_import_hides_in_a_function_and_the_modules_import_without_a_cycle():
    modules = {_module_name(p) for p in PACKAGE}
    graph, inside = {}, []
    for path in PACKAGE:
        graph[_module_name(path)], where = _imports(path, modules)
        inside += where
    assert inside == [], "pp_decomp imports inside functions (move them to the top)"
    assert _cycles(graph) == []
    # the checks see what they look for
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    probe = ROOT / "pp_decomp" / ".probe_imports.py"
    try:
        probe.write_text("def f():\n    from pp_decomp.loop import Optimizer\n")
        found, where = _imports(probe, modules)
        assert where and "pp_decomp.loop" in found
    finally:
        probe.unlink(missing_ok=True)


def _optimizer_privates(source: str) -> list[str]:
    """``opt._x`` / ``optimizer._x`` reads and writes: an Optimizer's private members."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("opt", "optimizer")
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{node.lineno} {ast.unparse(node)}")
    return found


def _outside_the_optimizer(finder) -> list[str]:
    """``finder``'s hits in every package module but loop/optimizer.py, as ``path:hit``."""
    own = ROOT / "pp_decomp" / "loop" / "optimizer.py"
    return [
        f"{path.relative_to(ROOT)}:{hit}"
        for path in PACKAGE
        if path != own
        for hit in finder(path.read_text())
    ]


def test_no_module_but_the_optimizers_own_touches_its_private_members():
    found = _outside_the_optimizer(_optimizer_privates)
    assert found == [], "the step's parts read the loop state (opt.state), not opt._..."
    assert _optimizer_privates("def f(opt):\n    return opt._rng(1, 2)\n") == ["2 opt._rng"]


MAX_TOP_LEVEL = 12


def test_the_top_level_is_a_map_of_a_dozen_modules_at_most():
    """The package's top level holds the core's shared pieces; rooms hold the rest."""
    top = sorted(p.name for p in (ROOT / "pp_decomp").glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_LEVEL, f"{len(top)} top-level modules: {top}"


# the core's one import of an application: Optimizer.report draws the run's pictures
CORE_USES_OF_APPS = {("pp_decomp.loop.optimizer", "pp_decomp.apps.report_pictures")}


def test_the_core_imports_no_application():
    modules = {_module_name(p) for p in PACKAGE}
    uses = {
        (_module_name(path), m)
        for path in PACKAGE
        if not _module_name(path).startswith("pp_decomp.apps")
        for m in _imports(path, modules)[0]
        if m.startswith("pp_decomp.apps.")
    }
    assert uses == CORE_USES_OF_APPS, "the core imports an application (pp_decomp/apps/)"


def _takes_the_optimizer(source: str) -> list[str]:
    """Functions with a parameter ``opt``/``optimizer`` or annotated ``Optimizer``, and
    attributes assigned one: a part that receives the whole optimiser."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (*FUNCTIONS, ast.Lambda)):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                note = "" if arg.annotation is None else ast.unparse(arg.annotation)
                if arg.arg in ("opt", "optimizer") or "Optimizer" in note:
                    found.append(f"{node.lineno} {getattr(node, 'name', 'lambda')}({arg.arg})")
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            if node.value.id in ("opt", "optimizer") and any(
                isinstance(t, ast.Attribute) for t in node.targets
            ):
                found.append(f"{node.lineno} {ast.unparse(node)}")
    return found


def test_no_function_but_the_optimizers_own_takes_the_whole_optimizer():
    """The step's parts receive what they read (RunSetup, LoopState, the updater, the
    GPs, bound steps), never the optimiser: only loop/optimizer.py holds one."""
    found = _outside_the_optimizer(_takes_the_optimizer)
    assert found == [], "pass the parts (setup, state, updater, models, steps), not the optimiser"
    probe = "def f(opt, x):\n    pass\ndef g(run: Optimizer):\n    pass\nclass A:\n"
    probe += "    def __init__(self, optimizer):\n        self.o = optimizer\n"
    assert _takes_the_optimizer(probe) == [
        "1 f(opt)",
        "3 g(run)",
        "6 __init__(optimizer)",
        "7 self.o = optimizer",
    ]


def test_the_command_lines_help_loads_no_numpy_pymc_or_xarray():
    """``pp-decomp --help`` builds the parser from pp_decomp.apps.cli.parsers, which import
    argparse-level code only; each sub-command's module loads when it runs."""
    import subprocess
    import sys

    probe = """
import contextlib, io, sys
import pp_decomp.apps.cli as cli
for argv in [["--help"], *([name, "--help"] for name in cli.HANDLERS)]:
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
        cli.main(argv)
    assert out.getvalue().startswith("usage: pp-decomp"), argv
heavy = ("numpy", "scipy", "pymc", "pytensor", "xarray", "arviz", "pandas")
print(sorted(m for m in heavy if m in sys.modules))
"""
    # run from tests/: the pp_decomp under test, as the suite imports it, not the folder above
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT / "tests"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"--help imported {done.stdout.strip()}"


def test_every_command_names_a_function_of_its_module():
    from pp_decomp.apps.cli import HANDLERS, build_parser

    listed = build_parser().format_help()
    for command, handler in HANDLERS.items():
        assert command in listed
        module, _, function = handler.partition(":")
        path = ROOT / (module.replace(".", "/") + ".py")
        defined = {n.name for n in _tree(path).body if isinstance(n, ast.FunctionDef)}
        assert function in defined, f"{command}: {module} has no function {function}"
