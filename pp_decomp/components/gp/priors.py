"""Hyperparameter priors of a GP (on unit-scaled inputs, standardised outputs)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.prior import Prior

LS_FAMILIES = ("lognormal", "inverse-gamma")
SIGMA_FAMILIES = ("gamma", "lognormal")


def f64(value: float) -> np.float64:
    """A prior's parameter as float64: PyMC stores a Python float in the smallest
    dtype that holds it exactly (``400.0`` as float32) and then computes Gamma's
    scale ``1/400`` in float32, off by 2e-8 relative, enough to move a tight
    prior's log density by 1e-5 (``Gamma(400, 400)``)."""
    return np.float64(value)


@dataclass(frozen=True)
class Priors:
    """Priors of ``ℓ`` (ARD lengthscales), ``η`` (amplitude), ``σ`` (noise sd), ``α`` (RQ
    shape) and the constant mean.

    Inputs are scaled to the unit box by the GP's ``bounds`` and outputs
    standardised, so the defaults are on that scale:

    * ``ℓ_d ~ InverseGamma(ls_alpha, ls_beta)`` (``ls_family="inverse-gamma"``,
      default): ``InverseGamma(3, 0.6)``, mean 0.3 of the box whatever ``d``, with
      little mass on lengthscales of many box widths, so MAP does not declare
      an input irrelevant on little data. ``ls_family="lognormal"`` gives
      ``ℓ_d ~ LogNormal(ls_loc + ½ log d, ls_scale)``, the dimension-scaled prior
      of Hvarfner, Hellsten & Nardi (2024) and BoTorch's default, whose median
      grows like ``sqrt(d)`` (why it is not the default: docs/design.md, "Why
      these defaults");
    * ``η ~ Gamma(eta_alpha, eta_beta)``: ``Gamma(400, 400)``, ``η`` within about 0.05 of 1,
      the standardised output's scale, all but fixed as in BoTorch's
      ``SingleTaskGP``;
    * ``σ ~ LogNormal(sigma_loc, sigma_scale)`` (``sigma_family="lognormal"``,
      default): median ``e⁻⁴ ≈ 0.018``, 95% between 0.001 and 0.35, so a nearly
      noise-free system is fitted as one and a noisy one as noisy;
      ``sigma_family="gamma"`` gives ``σ ~ Gamma(sigma_alpha, sigma_beta)``;
    * ``α ~ Gamma(alpha_alpha, alpha_beta)`` for the rational-quadratic kernel;
    * a constant mean ``m ~ Normal(0, mean_sd²)`` added to the zero-mean GP of the
      standardised output and integrated analytically: the kernel gains the
      constant ``mean_sd²``. Without it the prior mean is the plain average of the
      observations, which in an optimisation loop are clustered near the best
      input, so the average is biased high and every unexplored region looks
      promising; with it the GP estimates the mean from the data, weighing
      clustered (correlated) observations as the little evidence they are (the
      generalised-least-squares mean of ordinary kriging). ``mean_sd = 0`` keeps
      the plain average.

    Example
    -------
    >>> from pp_decomp import Priors
    >>> Priors().ls_family, bool(Priors(ls_family="lognormal").ls_log_center(4) > 1)
    ('inverse-gamma', True)
    """

    ls_family: str = "inverse-gamma"
    ls_loc: float = float(np.sqrt(2.0))
    ls_scale: float = float(np.sqrt(3.0))
    ls_alpha: float = 3.0
    ls_beta: float = 0.6
    eta_alpha: float = 400.0
    eta_beta: float = 400.0
    sigma_family: str = "lognormal"
    sigma_alpha: float = 2.0
    sigma_beta: float = 20.0
    sigma_loc: float = -4.0
    sigma_scale: float = 1.5
    alpha_alpha: float = 2.0
    alpha_beta: float = 1.0
    mean_sd: float = 1.0

    def __post_init__(self):
        if self.sigma_family not in SIGMA_FAMILIES:
            raise ValueError(
                f"Priors.sigma_family must be one of {SIGMA_FAMILIES}; got {self.sigma_family!r}"
            )
        if self.ls_family not in LS_FAMILIES:
            raise ValueError(
                f"Priors.ls_family must be one of {LS_FAMILIES}; got {self.ls_family!r}"
            )
        for name, value in vars(self).items():
            if name in ("ls_family", "ls_loc", "sigma_family", "sigma_loc"):
                continue
            positive = isinstance(value, int | float) and 0 < value < float("inf")
            if not (positive or (name == "mean_sd" and value == 0)):
                raise ValueError(f"Priors.{name} must be a finite number > 0; got {value!r}")
        for name in ("ls_loc", "sigma_loc"):  # locations of log-scale priors: any finite value
            value = getattr(self, name)
            if not np.isfinite(value):
                raise ValueError(f"Priors.{name} must be finite; got {value!r}")

    @property
    def mean_var(self) -> float:
        """Prior variance of the constant mean, the constant added to the kernel."""
        return float(self.mean_sd) ** 2

    def ls_log_center(self, d: int) -> float:
        """The centre of ``log ℓ`` in ``d`` dimensions: the median (lognormal) or
        the log of the mean (inverse gamma)."""
        if self.ls_family == "lognormal":
            return self.ls_loc + 0.5 * np.log(d)
        return float(np.log(self.ls_beta / max(self.ls_alpha - 1.0, 1.0)))

    def log_center(self, kernel: str, d: int) -> np.ndarray:
        """Where a fit starts without a previous posterior, ``z = log θ``: the
        centre of each prior (a non-lognormal ``ℓ`` with ``a ≤ 1``, no finite
        mean, at 1): (d + 2,), (d + 3,) for ``rq``."""
        ls0 = self.ls_log_center(d) if self.ls_family == "lognormal" or self.ls_alpha > 1 else 0.0
        rq = [np.log(self.alpha_alpha / self.alpha_beta)] if kernel == "rq" else []
        return np.r_[
            np.full(d, ls0), np.log(self.eta_alpha / self.eta_beta), self.sigma_log_center(), rq
        ]

    def sample(self, kernel: str, d: int, S: int, rng: np.random.Generator):
        """``S`` independent draws of ``θ`` from the priors, as :class:`HyperDraws`:
        ``ls`` (S, d), ``eta``, ``sigma`` and (``rq``) ``alpha`` (S,)."""
        log_ls = self.sample_log_ls(rng, d, size=S)
        eta = rng.gamma(self.eta_alpha, size=S) / self.eta_beta
        log_sigma = self.sample_log_sigma(rng, size=S)
        alpha = rng.gamma(self.alpha_alpha, size=S) / self.alpha_beta if kernel == "rq" else None
        return HyperDraws(ls=np.exp(log_ls), eta=eta, sigma=np.exp(log_sigma), alpha=alpha)

    def sample_log_ls(self, rng, d: int, size: int | None = None) -> np.ndarray:
        """``log ℓ`` drawn from the prior: (d,), or (size, d) for ``size`` draws."""
        shape = d if size is None else (size, d)
        if self.ls_family == "lognormal":
            return rng.normal(self.ls_loc + 0.5 * np.log(d), self.ls_scale, size=shape)
        return np.log(self.ls_beta / rng.gamma(self.ls_alpha, size=shape))

    def pymc_ls(self, d: int):
        """The lengthscale prior as a PyMC random variable ``ls`` of shape ``d`` (in a model)."""
        import pymc as pm

        if self.ls_family == "lognormal":
            mu = f64(self.ls_loc + 0.5 * np.log(d))
            return pm.LogNormal("ls", mu=mu, sigma=f64(self.ls_scale), shape=d)
        return pm.InverseGamma("ls", alpha=f64(self.ls_alpha), beta=f64(self.ls_beta), shape=d)

    def pymc_eta(self, shape=None):
        """The amplitude prior as a PyMC random variable ``eta`` (in a model)."""
        import pymc as pm

        return pm.Gamma("eta", alpha=f64(self.eta_alpha), beta=f64(self.eta_beta), shape=shape)

    def pymc_alpha(self):
        """The rational-quadratic shape prior as a PyMC random variable ``alpha``."""
        import pymc as pm

        return pm.Gamma("alpha", alpha=f64(self.alpha_alpha), beta=f64(self.alpha_beta))

    def log_variance(self, name: str) -> float:
        """The prior variance of ``log η`` (``name="eta"``) or ``log σ`` (``"sigma"``):
        ``ψ₁(a)`` (the trigamma function) for a ``Gamma(a, b)``, ``s²`` for a
        ``LogNormal(μ, s)``."""
        from scipy.special import polygamma

        if name == "eta":
            return float(polygamma(1, self.eta_alpha))
        if name == "sigma":
            if self.sigma_family == "lognormal":
                return float(self.sigma_scale) ** 2
            return float(polygamma(1, self.sigma_alpha))
        raise ValueError(f"name must be 'eta' or 'sigma'; got {name!r}")

    def sigma_log_center(self) -> float:
        """The centre of ``log σ``: the median (lognormal) or the log of the mean (gamma)."""
        if self.sigma_family == "lognormal":
            return self.sigma_loc
        return float(np.log(self.sigma_alpha / self.sigma_beta))

    def sigma_prior(self):
        """The noise prior as a :class:`~pp_decomp.Prior`."""
        if self.sigma_family == "lognormal":
            return Prior("LogNormal", mu=self.sigma_loc, sigma=self.sigma_scale)
        return Prior("Gamma", alpha=self.sigma_alpha, beta=self.sigma_beta)

    def sample_log_sigma(self, rng, size: int | None = None):
        """``log σ`` drawn from the prior: a float, or (size,) for ``size`` draws."""
        if self.sigma_family == "lognormal":
            return rng.normal(self.sigma_loc, self.sigma_scale, size=size)
        if size is None:
            return float(np.log(rng.gamma(self.sigma_alpha) / self.sigma_beta))
        return np.log(rng.gamma(self.sigma_alpha, size=size) / self.sigma_beta)

    def pymc_sigma(self, shape=None):
        """The noise prior as a PyMC random variable ``sigma`` (in a model)."""
        import pymc as pm

        if self.sigma_family == "lognormal":
            mu, s = f64(self.sigma_loc), f64(self.sigma_scale)
            return pm.LogNormal("sigma", mu=mu, sigma=s, shape=shape)
        a, b = f64(self.sigma_alpha), f64(self.sigma_beta)
        return pm.Gamma("sigma", alpha=a, beta=b, shape=shape)


def as_priors(priors) -> Priors:
    """``priors``, or the default :class:`Priors` for ``None``; a TypeError naming
    the argument for anything else."""
    if priors is None:
        return Priors()
    if not isinstance(priors, Priors):
        raise TypeError(f"priors must be a pp_decomp.Priors; got {type(priors).__name__}")
    return priors
