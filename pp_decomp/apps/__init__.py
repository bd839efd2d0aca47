"""The applications built on the package's core: what a user runs around a loop.

* :mod:`~pp_decomp.apps.cli`: the command line (``pp-decomp run / bench / demo /
  report / calibration / perf / ...``);
* :mod:`~pp_decomp.apps.bench`: benchmarks of many runs (specs and presets, local
  or Dask execution, summary tables and plots);
* :mod:`~pp_decomp.apps.calibration`, :mod:`~pp_decomp.apps.regression`,
  :mod:`~pp_decomp.apps.regression_problem`, :mod:`~pp_decomp.apps.model_choice`:
  studies of the posterior's calibration, of regression on held-out inputs and
  of the component models;
* :mod:`~pp_decomp.apps.perf`: the speed benchmark;
* :mod:`~pp_decomp.apps.run_report`, :mod:`~pp_decomp.apps.report_pictures`,
  :mod:`~pp_decomp.apps.plots`: a run's report and pictures.

The core (problem, components, composition, acquisition, optim, strategies, loop)
imports none of them, except ``Optimizer.report``, which draws a run's pictures.
This package's ``__init__`` imports nothing, so the command line's ``--help``
loads no numpy.
"""
