"""Settings stored by earlier versions resume with the behaviour they were run with."""

from __future__ import annotations

from pp_decomp.loop.settings import RunSettings
from pp_decomp.models import get_problem


def _stored(**additive) -> dict:
    problem = get_problem("kandasamy-10-3-3", seed=0)
    settings = RunSettings.build(problem, strategy="add-gp-ucb", n_init=3, seed=0)
    stored = settings.to_dict()
    stored["additive_settings"] = additive
    return stored


def test_checkpoints_from_before_shared_hyperparameters_resume_untied():
    kw = RunSettings.kwargs_from_dict(_stored(n_cyc=25))  # no shared_hyperparameters key
    assert kw["additive_settings"].shared_hyperparameters is False


def test_stored_shared_hyperparameters_are_kept():
    kw = RunSettings.kwargs_from_dict(_stored(n_cyc=25, shared_hyperparameters=True))
    assert kw["additive_settings"].shared_hyperparameters is True
