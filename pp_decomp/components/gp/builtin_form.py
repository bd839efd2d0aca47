"""Which component models the built-in engine takes.

The built-in engine (:mod:`pp_decomp.components.gp.density`, the numpy posterior
of :mod:`pp_decomp.components.posterior.batched`, the fast full-Bayes path) fits one
ARD kernel of the four shorthand families over all inputs with ``LogNormal``
or ``InverseGamma`` lengthscales, ``Gamma`` amplitude and shape, and a
``LogNormal`` or ``Gamma`` noise. :func:`builtin_form` turns such a kernel
object into its shorthand and :class:`~pp_decomp.Priors`; anything else runs on
the general engine (:mod:`pp_decomp.components.gp.kernel_gp`).
"""

from __future__ import annotations

import math
from dataclasses import replace

from pp_decomp.components.gp.priors import Priors
from pp_decomp.kernels.base import Kernel
from pp_decomp.kernels.families import ExpQuad, Matern32, Matern52, RatQuad
from pp_decomp.prior import Prior

SHORTHAND = {ExpQuad: "se", Matern52: "matern52", Matern32: "matern32", RatQuad: "rq"}


def builtin_form(kernel: Kernel, priors: Priors, noise: Prior | None) -> tuple[str, dict] | None:
    """``(shorthand, Priors fields)`` of ``kernel`` with ``noise``, starting from
    ``priors``; ``None`` where the built-in engine cannot fit it. The lengthscale's
    ``LogNormal(mu, s)`` becomes the fields ``ls_loc = mu - ½ log d``, ``ls_scale =
    s``, resolved once ``d`` is known (``"ls_mu"`` holds ``mu``)."""
    leaves = kernel.leaves()
    if len(leaves) != 1 or type(leaves[0]) not in SHORTHAND or leaves[0].active_dims is not None:
        return None
    leaf, fields = leaves[0], {}
    ls = leaf.values.get("ls")
    if isinstance(ls, Prior) and ls.is_native and ls.distribution == "LogNormal":
        fields.update(
            ls_family="lognormal", ls_mu=ls.parameters["mu"], ls_scale=ls.parameters["sigma"]
        )
    elif isinstance(ls, Prior) and ls.is_native and ls.distribution == "InverseGamma":
        fields.update(
            ls_family="inverse-gamma",
            ls_alpha=ls.parameters["alpha"],
            ls_beta=ls.parameters["beta"],
        )
    elif ls is not None:
        return None
    for name, key in (("eta", "eta"), ("alpha", "alpha")):
        value = leaf.values.get(name)
        if isinstance(value, Prior) and value.is_native and value.distribution == "Gamma":
            fields[f"{key}_alpha"] = value.parameters["alpha"]
            fields[f"{key}_beta"] = value.parameters["beta"]
        elif value is not None:
            return None
    if noise is not None:
        if noise.is_native and noise.distribution == "LogNormal":
            fields.update(
                sigma_family="lognormal",
                sigma_loc=noise.parameters["mu"],
                sigma_scale=noise.parameters["sigma"],
            )
        elif noise.is_native and noise.distribution == "Gamma":
            fields.update(
                sigma_family="gamma",
                sigma_alpha=noise.parameters["alpha"],
                sigma_beta=noise.parameters["beta"],
            )
        else:
            return None
    return SHORTHAND[type(leaf)], fields


def family_expression(
    kernel: str,
    priors: Priors,
    input_dim: int,
    active_dims: list[int] | None = None,
    unit_amplitude: bool = False,
) -> Kernel:
    """The built-in ``kernel`` (a shorthand) with ``priors`` on ``input_dim`` inputs as a
    kernel expression: the inverse of :func:`builtin_form` (the noise and constant
    mean stay ``priors``'), for the general engine to wrap, e.g. in ``K.Warped``;
    on ``active_dims`` only where given, and with ``η = 1`` where ``unit_amplitude``
    (a factor of a product whose other factor has the amplitude)."""
    if priors.ls_family == "lognormal":
        mu = priors.ls_loc + 0.5 * math.log(input_dim)
        ls = Prior("LogNormal", mu=mu, sigma=priors.ls_scale)
    else:
        ls = Prior("InverseGamma", alpha=priors.ls_alpha, beta=priors.ls_beta)
    values = {"ls": ls, "eta": Prior("Gamma", alpha=priors.eta_alpha, beta=priors.eta_beta)}
    if kernel == "rq":
        values["alpha"] = Prior("Gamma", alpha=priors.alpha_alpha, beta=priors.alpha_beta)
    if unit_amplitude:
        values["eta"] = 1.0
    family = {short: cls for cls, short in SHORTHAND.items()}[kernel]
    return family(**values, active_dims=active_dims)


def resolved_priors(priors: Priors, fields: dict, input_dim: int) -> Priors:
    """``priors`` with ``fields`` of :func:`builtin_form` on ``input_dim`` inputs."""
    fields = dict(fields)
    mu = fields.pop("ls_mu", None)
    if mu is not None:
        fields["ls_loc"] = mu - 0.5 * math.log(input_dim)
    return replace(priors, **fields) if fields else priors
