"""Every analyst notebook runs end to end in quick mode (``PP_DECOMP_QUICK=1``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_the_three_analyst_notebooks_exist_with_outputs():
    import nbformat

    names = {p.stem for p in NOTEBOOKS}
    assert {"flu_full_bayes", "hyperparameter_uncertainty", "perceived_temperature"} <= names
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(c.get("execution_count") for c in code), f"{path.name} has unexecuted cells"
        assert sum(bool(c.get("outputs")) for c in code) >= len(code) // 2, path.name
        images = sum("image/png" in o.get("data", {}) for c in code for o in c["outputs"])
        assert images >= 2, f"{path.name} shows {images} plots"
        errors = [o for c in code for o in c["outputs"] if o.get("output_type") == "error"]
        assert not errors, f"{path.name} was committed with an error output"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_in_quick_mode(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    monkeypatch.setenv("PP_DECOMP_QUICK", "1")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    nb = nbformat.read(path, as_version=4)
    # raises CellExecutionError, with the failing cell and traceback, on any error
    NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
