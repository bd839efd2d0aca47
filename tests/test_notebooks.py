"""Every analyst notebook runs end to end in quick mode (``PP_DECOMP_QUICK=1``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_the_analyst_notebooks_exist_with_outputs():
    import nbformat

    names = {p.stem for p in NOTEBOOKS}
    assert {
        "flu_full_bayes",
        "function_networks",
        "hyperparameter_uncertainty",
        "perceived_temperature",
    } <= names
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(c.get("execution_count") for c in code), f"{path.name} has unexecuted cells"
        assert sum(bool(c.get("outputs")) for c in code) >= len(code) // 2, path.name
        images = sum("image/png" in o.get("data", {}) for c in code for o in c["outputs"])
        assert images >= 2, f"{path.name} shows {images} plots"
        errors = [o for c in code for o in c["outputs"] if o.get("output_type") == "error"]
        assert not errors, f"{path.name} was committed with an error output"


def test_no_notebook_hides_a_warning_and_each_one_shown_is_explained():
    import nbformat

    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        explained = ""  # the markdown above a code cell, and the cell's own comments
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                explained += cell.source
                continue
            src = cell.source
            assert 'simplefilter("ignore")' not in src, f"{path.name} hides warnings: {src[:80]}"
            assert 'filterwarnings("ignore"' not in src, f"{path.name} hides warnings: {src[:80]}"
            for out in cell.get("outputs", []):
                if out.get("name") != "stderr":
                    continue
                for kind in re.findall(r"(\w+Warning):", out["text"]):
                    assert kind in explained + src, (
                        f"{path.name} prints a {kind} that neither the cell nor the text "
                        f"above it explains: {out['text'][:200]}"
                    )
            explained = ""


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
