"""The maximisers of the acquisitions, and what they must not ask.

* :mod:`~pp_decomp.optim.maximizers`: exhaustive over a candidate set; multi-start
  local search (or DIRECT) on a box with linear constraints; the exclusion of
  failed and pending inputs; :func:`maximize` chooses by domain; the local
  searches' evaluations of the acquisition answered together, one batched call
  a round (``in_lockstep``);
* :mod:`~pp_decomp.optim.maxsum`: max-sum message passing on a junction tree
  (the additive strategies' maximiser over a grid).

Example
-------
>>> import numpy as np
>>> from pp_decomp.optim import maximize
>>> from pp_decomp.space import CandidateSet
>>> x, value = maximize(lambda X: -((X - 0.3) ** 2).sum(1), CandidateSet(np.c_[[0.0, 0.3, 1.0]]))
>>> float(x[0]), float(value)
(0.3, -0.0)
"""

from pp_decomp.optim.maximizers import (
    BOX_RADIUS,
    CHUNK,
    FD_STEP,
    METHODS,
    TOL,
    exclusion_radius,
    is_excluded,
    maximize,
    maximize_box,
    maximize_candidates,
    project_feasible,
    value_and_fd_gradient,
    within,
)

__all__ = [
    "BOX_RADIUS",
    "CHUNK",
    "FD_STEP",
    "METHODS",
    "TOL",
    "exclusion_radius",
    "is_excluded",
    "maximize",
    "maximize_box",
    "maximize_candidates",
    "project_feasible",
    "value_and_fd_gradient",
    "within",
]
