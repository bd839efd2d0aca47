"""Every setting that determines a run, validated once and serialisable.

* :mod:`~pp_decomp.loop.settings.run`: :class:`RunSettings`, built and checked by
  :meth:`RunSettings.build` before anything is evaluated, stored with the run; it
  holds the run's own settings and three groups:
* :mod:`~pp_decomp.loop.settings.model`: :class:`ModelSettings`, the component models;
* :mod:`~pp_decomp.loop.settings.inference`: :class:`InferenceSettings`, the
  hyperparameter inference;
* :mod:`~pp_decomp.loop.settings.acquisition`: :class:`AcquisitionSettings`, ``β_t``
  and the acquisition's sizes;
* :mod:`~pp_decomp.loop.settings.fast`: :class:`FastSettings`, the full-Bayes fast
  path's refit policy;
* :mod:`~pp_decomp.loop.settings.checks`: the checks across settings;
* :mod:`~pp_decomp.loop.settings.beta`: the default exploration schedule.
"""

from pp_decomp.loop.settings.acquisition import AcquisitionSettings
from pp_decomp.loop.settings.beta import default_beta, max_group_size
from pp_decomp.loop.settings.checks import COPULA_SURROGATES, copula_applies
from pp_decomp.loop.settings.fast import FastSettings
from pp_decomp.loop.settings.inference import InferenceSettings
from pp_decomp.loop.settings.model import ModelSettings
from pp_decomp.loop.settings.run import RunSettings

__all__ = [
    "COPULA_SURROGATES",
    "AcquisitionSettings",
    "FastSettings",
    "InferenceSettings",
    "ModelSettings",
    "RunSettings",
    "copula_applies",
    "default_beta",
    "max_group_size",
]
