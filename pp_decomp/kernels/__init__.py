"""Kernels: composable covariance families, named as ``pm.gp.cov`` names them.

``ExpQuad``, ``Matern12``, ``Matern32``, ``Matern52``, ``RatQuad``, ``Periodic``,
``Linear`` and ``Constant``, each ``η² k_θ`` with ARD lengthscales, composed with
``+`` and ``*``, restricted with ``active_dims=`` and warped with
:func:`~pp_decomp.kernels.warping.Warped`; every hyperparameter has a
default prior and takes a :class:`~pp_decomp.Prior` or a fixed value. The
strings ``"se"``, ``"matern52"``, ``"matern32"`` and ``"rq"`` are shorthands for
the first four with their default priors.

Example
-------
>>> from pp_decomp import Prior, kernels as K
>>> k = K.Matern12(ls=Prior("InverseGamma", alpha=3, beta=0.6)) + K.Constant()
>>> K.BoundKernel(k, input_dim=2).names  # the kernel laid out on 2 inputs
['ls_0', 'eta_0', 'eta_1']
"""

from pp_decomp.choices import DEFAULT_KERNEL
from pp_decomp.kernels.base import Family, Kernel, Param, Product, Stationary, Sum
from pp_decomp.kernels.bound import BoundKernel
from pp_decomp.kernels.builtin import (
    ALIASES,
    KERNELS,
    canonical_kernel,
    correlation_from_sqdist,
    kernel_matrix,
    pymc_cov,
    scaled_sqdist,
    shorthand,
)
from pp_decomp.kernels.families import (
    Constant,
    ExpQuad,
    Linear,
    Matern12,
    Matern32,
    Matern52,
    Periodic,
    RatQuad,
)
from pp_decomp.kernels.warping import Warped, WarpedFamily, warped_family

__all__ = [
    "ALIASES",
    "DEFAULT_KERNEL",
    "KERNELS",
    "BoundKernel",
    "Constant",
    "ExpQuad",
    "Family",
    "Kernel",
    "Linear",
    "Matern12",
    "Matern32",
    "Matern52",
    "Param",
    "Periodic",
    "Product",
    "RatQuad",
    "Stationary",
    "Sum",
    "Warped",
    "WarpedFamily",
    "canonical_kernel",
    "correlation_from_sqdist",
    "kernel_matrix",
    "pymc_cov",
    "scaled_sqdist",
    "shorthand",
    "warped_family",
]
