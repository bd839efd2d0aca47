"""Model updaters: how the loop's surrogate models follow the data.

Every updater obeys one protocol (:class:`Updater`): ``update`` returns the
step's fitted GPs by name, ``state``/``restore`` carry whatever it keeps
between steps through a checkpoint.
:func:`~pp_decomp.loop.updaters.factory.make_updater` picks one from the run's
settings and strategy:

* :class:`~pp_decomp.loop.updaters.refit.RefitUpdater`: hyperparameters by MAP or
  NUTS every ``refit_every`` new observations, the last draws conditioned on the
  data in between (Emukit's ``FixedIntervalUpdater``);
* :class:`~pp_decomp.loop.updaters.refit.KnownKernelsUpdater`: GPs conditioned on
  known kernels, no inference;
* :class:`~pp_decomp.loop.updaters.fast.FastUpdater`: the fast full-Bayes path;
* :class:`~pp_decomp.loop.updaters.additive.AdditiveUpdater`: one additive GP whose
  structure is relearnt every ``n_cyc`` steps;
* :class:`~pp_decomp.loop.updaters.correlated.CorrelatedUpdater`: the components
  as one GP with correlated outputs (``correlated=True``).
"""

from pp_decomp.loop.updaters.base import LoopData, Updater, loop_data
from pp_decomp.loop.updaters.refit import KnownKernelsUpdater, RefitUpdater

__all__ = ["KnownKernelsUpdater", "LoopData", "RefitUpdater", "Updater", "loop_data"]
