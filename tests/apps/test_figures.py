"""The package's pictures leave the user's matplotlib backend as it was
(:mod:`pp_decomp.apps.figures`): a notebook's inline plots keep showing after a report."""

from __future__ import annotations

import matplotlib

import pp_decomp as ppd
from pp_decomp.models import get_problem


def test_a_report_leaves_the_backend_and_pyplot_untouched(tmp_path):
    import matplotlib.pyplot as plt

    before, open_before = matplotlib.get_backend(), set(plt.get_fignums())
    matplotlib.use("svg")  # a backend of the user's that is not Agg
    try:
        opt = ppd.Optimizer(get_problem("synthetic", seed=0), seed=0)
        opt.run(7)
        opt.report(tmp_path / "report")
        assert matplotlib.get_backend() == "svg"
        assert set(plt.get_fignums()) == open_before  # none left open, ArviZ's included
        assert (tmp_path / "report" / "hyperparameters.png").stat().st_size > 0
    finally:
        matplotlib.use(before)
