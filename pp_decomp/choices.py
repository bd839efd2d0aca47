"""The names users choose among (kernels, inference methods, outcome transforms, warps)
and the defaults: plain constants without dependencies, so that the command
line's parser names them without loading numpy or PyMC, and the modules that act
on a choice read the same names.

Example
-------
>>> from pp_decomp.choices import DEFAULT_KERNEL, KERNELS
>>> DEFAULT_KERNEL in KERNELS
True
"""

KERNELS = ("se", "matern52", "matern32", "rq")
KERNEL_ALIASES = {"expquad": "se", "matern": "matern52", "ratquad": "rq"}
# the GPs' kernel unless given: docs/design.md, "Calibrated defaults"
DEFAULT_KERNEL = "matern32"
# hyperparameters learned from the data: a posterior mode, or full Bayes by NUTS
FITTED_INFERENCE = ("map", "nuts")
# how a run's hyperparameters are had: learned, or known kernels
INFERENCE_METHODS = (*FITTED_INFERENCE, "fixed")
# how the regression study has them: the generating kernels, or learned
STUDY_INFERENCE = ("true", *FITTED_INFERENCE)
OUTCOME_TRANSFORMS = ("none", "log")
# the output warps a component GP learns (ComponentGP(warp=...), Optimizer(output_warp=...))
OUTPUT_WARPS = ("sinh-arcsinh",)
