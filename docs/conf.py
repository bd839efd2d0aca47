"""Sphinx configuration of the pp_decomp documentation (built with ``-W``: warnings fail)."""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pp_decomp  # noqa: E402

project = "pp_decomp"
author = "pp_decomp developers"
copyright = "2026, pp_decomp developers"  # noqa: A001 (Sphinx's name)
release = version = pp_decomp.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
exclude_patterns = [
    "_build",
    "results/README.md",
    "results/**/summary.md",
    "results/calibration*/*.md",  # each run's table, included where the results page shows it
    "results/hyper-*/*.md",  # each study's tables, summarised on the results page
]
templates_path = ["_templates"]

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "none"  # the numpydoc sections carry types and shapes
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

html_theme = "alabaster"
html_static_path = []
# Shape words in numpydoc types ("(n, d) array") would otherwise resolve to
# several attributes named ``n``.
suppress_warnings = ["myst.header", "ref.python"]
