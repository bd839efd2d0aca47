"""pp_decomp uses only public APIs of its dependencies.

Every ``import x.y`` and ``from x.y import z`` in ``pp_decomp/`` and ``models/``
(function-local ones included) of a third-party module is checked: no module
path with a component starting with an underscore, no imported name starting
with one (dunders such as ``__version__`` are public), no attribute starting
with one taken from an imported module. Of nutpie only the documented entry
points: ``import nutpie`` (its ``sample`` and ``compile_pymc_model``),
``from nutpie import sample, compile_pymc_model`` and
``from nutpie.compiled_pyfunc import from_pyfunc``; and no class of pp_decomp
subclasses a class imported from nutpie. First-party (``pp_decomp``,
``models``, relative) and standard-library imports are exempt.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_PARTY = {"pp_decomp", "models"}
NUTPIE_TOP = {"sample", "compile_pymc_model"}  # nutpie's names usable as nutpie.<name>
NUTPIE_FROM = {"nutpie": NUTPIE_TOP, "nutpie.compiled_pyfunc": {"from_pyfunc"}}


@dataclass(frozen=True)
class Import:
    """One imported third-party module (``name``: the name taken from it, if any)."""

    where: str
    module: str
    name: str | None


def sources(root: Path) -> list[Path]:
    return sorted((root / "pp_decomp").rglob("*.py")) + sorted((root / "models").rglob("*.py"))


def _third_party(module: str) -> bool:
    top = module.split(".")[0]
    return top not in FIRST_PARTY and top not in sys.stdlib_module_names


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _private(name: str) -> bool:
    return name.startswith("_") and not _dunder(name)


def third_party_imports(tree: ast.Module, label: str) -> list[Import]:
    """Every import of a third-party module in ``tree``, one per imported name."""
    found = []
    for node in ast.walk(tree):
        where = f"{label}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [Import(where, a.name, None) for a in node.names if _third_party(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _third_party(node.module):
            found += [Import(where, node.module, a.name) for a in node.names]
    return found


def _import_problem(imp: Import) -> str | None:
    if any(_private(part) for part in imp.module.split(".")):
        return f"private module {imp.module}"
    if imp.name is not None and _private(imp.name):
        return f"private name {imp.name} from {imp.module}"
    if imp.module.split(".")[0] != "nutpie":
        return None
    if imp.name is None:
        return None if imp.module == "nutpie" else f"nutpie internal module {imp.module}"
    if imp.name not in NUTPIE_FROM.get(imp.module, ()):
        return f"nutpie internal {imp.module}.{imp.name}"
    return None


def _bindings(tree: ast.Module) -> tuple[dict[str, str], set[str]]:
    """Local names bound to third-party modules by ``import``, and the names
    imported from nutpie."""
    modules, from_nutpie = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _third_party(a.name):
                    local = a.asname or a.name.split(".")[0]
                    modules[local] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "nutpie":
                from_nutpie |= {a.asname or a.name for a in node.names}
    return modules, from_nutpie


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def problems(tree: ast.Module, label: str) -> list[str]:
    """What in ``tree`` uses a private API of a dependency, as ``file:line what``."""
    found = []
    for imp in third_party_imports(tree, label):
        problem = _import_problem(imp)
        if problem:
            found.append(f"{imp.where} {problem}")
    modules, from_nutpie = _bindings(tree)
    for node in ast.walk(tree):
        where = f"{label}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = modules.get(node.value.id)
            if module is None:
                continue
            if _private(node.attr):
                found.append(f"{where} private attribute {module}.{node.attr}")
            elif module == "nutpie" and not (node.attr in NUTPIE_TOP or _dunder(node.attr)):
                found.append(f"{where} nutpie internal nutpie.{node.attr}")
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                root = _root_name(base)
                if root in from_nutpie or modules.get(root, "").split(".")[0] == "nutpie":
                    found.append(f"{where} class {node.name} subclasses {ast.unparse(base)}")
    return found


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def package_problems(root: Path = ROOT) -> list[str]:
    return [p for path in sources(root) for p in problems(_tree(path), str(path.relative_to(root)))]


def test_the_package_uses_only_public_apis_of_its_dependencies():
    imports = [i for path in sources(ROOT) for i in third_party_imports(_tree(path), path.name)]
    assert {"numpy", "scipy", "nutpie"} <= {i.module.split(".")[0] for i in imports}
    found = package_problems(ROOT)
    assert not found, "private APIs of dependencies in use:\n" + "\n".join(found)


def test_the_check_sees_each_kind_of_private_use():
    source = """
import nutpie
import nutpie.compile_pymc
import numpy as np
from nutpie import _lib, sample
from nutpie.compiled_pyfunc import PyFuncModel, from_pyfunc
from pymc.distributions._x import y
from scipy.linalg import _private, __version__
from pp_decomp._runtime import arviz
from . import _local
import os._thing


def f():
    from nutpie.compile_pymc import CompiledPyMCModel

    class Model(CompiledPyMCModel):
        pass

    return nutpie.compile_pymc, nutpie.sample, np._core, np.__version__


class Other(nutpie.compiled_pyfunc.PyFuncModel):
    pass
"""
    assert sorted(problems(ast.parse(source), "x.py")) == sorted(
        [
            "x.py:3 nutpie internal module nutpie.compile_pymc",
            "x.py:5 private name _lib from nutpie",
            "x.py:6 nutpie internal nutpie.compiled_pyfunc.PyFuncModel",
            "x.py:7 private module pymc.distributions._x",
            "x.py:8 private name _private from scipy.linalg",
            "x.py:15 nutpie internal nutpie.compile_pymc.CompiledPyMCModel",
            "x.py:17 class Model subclasses CompiledPyMCModel",
            "x.py:20 nutpie internal nutpie.compile_pymc",
            "x.py:20 private attribute numpy._core",
            "x.py:23 class Other subclasses nutpie.compiled_pyfunc.PyFuncModel",
            "x.py:23 nutpie internal nutpie.compiled_pyfunc",
        ]
    )
