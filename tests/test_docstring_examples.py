"""Every example in a pp_decomp docstring runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import pp_decomp


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(pp_decomp.__path__, "pp_decomp."):
        if info.name.startswith(("pp_decomp.models", "pp_decomp.apps.cli.__main__")):
            continue
        tests = doctest.DocTestFinder().find(importlib.import_module(info.name), info.name)
        if any(t.examples for t in tests):
            names.append(info.name)
    return names


MODULES = _modules_with_examples()


def test_the_examples_are_found():
    assert {"pp_decomp.loop.records", "pp_decomp.loop.settings.fast", "pp_decomp.kernels"} <= set(
        MODULES
    )


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"
