"""The documentation: every public function and class has a docstring and an API entry."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import shutil
from pathlib import Path

import pytest

import pp_decomp

DOCS = Path(__file__).resolve().parent.parent / "docs"


def public_modules() -> list[str]:
    names = ["pp_decomp", "pp_decomp.models"]
    for pkg in ("pp_decomp", "pp_decomp.models"):
        mod = importlib.import_module(pkg)
        names += [m.name for m in pkgutil.walk_packages(mod.__path__, pkg + ".")]
    return sorted({n for n in names if not any(p.startswith("_") for p in n.split("."))})


def public_objects() -> dict[str, object]:
    """Public functions, classes and methods defined in pp_decomp, by qualified name."""
    out = {}
    for modname in public_modules():
        mod = importlib.import_module(modname)
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != modname:
                continue
            if inspect.isfunction(obj):
                out[f"{modname}.{name}"] = obj
            elif inspect.isclass(obj):
                out[f"{modname}.{name}"] = obj
                for mname, member in vars(obj).items():
                    if not mname.startswith("_") and inspect.isfunction(member):
                        out[f"{modname}.{name}.{mname}"] = member
    return out


def test_every_public_function_and_class_has_a_docstring():
    missing = [name for name, obj in public_objects().items() if not inspect.getdoc(obj)]
    assert not missing, f"public objects without a docstring: {missing}"


@pytest.mark.slow
def test_docs_build_without_warnings_and_list_every_public_object(tmp_path):
    sphinx = pytest.importorskip("sphinx.cmd.build")
    from sphinx.util.inventory import InventoryFile

    src = tmp_path / "docs"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "generated"))
    out = tmp_path / "html"
    assert sphinx.build_main(["-q", "-W", "-b", "html", str(src), str(out)]) == 0
    with open(out / "objects.inv", "rb") as fh:
        inv = InventoryFile.load(fh, "", lambda base, uri: uri)
    documented = set()
    for role, entries in inv.items():
        if role.startswith("py:"):
            documented |= set(entries)
    absent = sorted(set(public_objects()) - documented)
    assert not absent, f"public objects missing from the API reference: {absent}"
    assert pp_decomp.__version__


def test_every_results_folder_is_named_in_the_results_readme():
    readme = (DOCS / "results" / "README.md").read_text()
    folders = sorted(p.name for p in (DOCS / "results").iterdir() if p.is_dir())
    assert [f for f in folders if f"{f}/" not in readme] == []
