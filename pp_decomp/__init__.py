"""pp_decomp: Bayesian optimisation with decomposed feedback, on PyMC.

Each observed component ``f_j`` gets its own PyMC marginal GP with priors on its
hyperparameters (:class:`ComponentGP`); the components are composed into a
posterior for the objective ``f = g(f_1, ..., f_J)`` (:mod:`pp_decomp.composition`).

The public names are imported on first use, so ``import pp_decomp`` (and the
command line's ``--help``) does not pay for PyMC, PyTensor and ArviZ.
"""

from importlib import import_module

from pp_decomp._runtime import pin_threads

pin_threads()

__version__ = "0.1.0"

_EXPORTS = {
    "Box": "pp_decomp.space",
    "CandidateSet": "pp_decomp.space",
    "Optimizer": "pp_decomp.loop",
    "Problem": "pp_decomp.problem",
    "ComponentGP": "pp_decomp.components",
    "CorrelatedComponents": "pp_decomp.components",
    "EntireGP": "pp_decomp.composition",
    "GPPosterior": "pp_decomp.components",
    "HyperDraws": "pp_decomp.components",
    "KnownKernels": "pp_decomp.components",
    "LinearComposition": "pp_decomp.composition",
    "KernelDraws": "pp_decomp.components.posterior.draws",
    "Prior": "pp_decomp.prior",
    "Priors": "pp_decomp.components",
    "report": "pp_decomp.apps.run_report",
    "hyper_study": "pp_decomp.apps.hyper_study",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'pp_decomp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
