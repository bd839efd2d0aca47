"""Priors of a model's hyperparameters, in the ecosystem's form.

``Prior("InverseGamma", alpha=3, beta=0.6)`` names a PyMC distribution and its
keyword arguments, with the signature and the dictionary form of
``pymc_extras.prior.Prior`` (``to_dict() == {"dist": ..., "kwargs": ...}``), so a
user's pymc-extras priors are accepted as they are (:func:`as_prior`) without
pymc-extras being a dependency.

The families below are evaluated in numba by every fast path (the NUTS density,
the MAP objective, importance weights), on ``z``, the parameter's unconstrained
coordinate (``z = log θ`` for a positive ``θ``, ``z = θ`` for a real one):

=================  ====================  ========
family             arguments             support
=================  ====================  ========
``LogNormal``      ``mu``, ``sigma``     θ > 0
``Gamma``          ``alpha``, ``beta``   θ > 0
``InverseGamma``   ``alpha``, ``beta``   θ > 0
``HalfNormal``     ``sigma``             θ > 0
``HalfCauchy``     ``beta``              θ > 0
``Exponential``    ``lam``               θ > 0
``Normal``         ``mu``, ``sigma``     real
=================  ====================  ========

Any other PyMC family (or other arguments, e.g. ``Gamma(mu=, sigma=)``) is
evaluated by PyMC itself: :meth:`Prior.is_native` says which, and the models
warn once where they take the slower route.

Example
-------
>>> from pp_decomp import Prior
>>> p = Prior("Gamma", alpha=2.0, beta=1.0)
>>> p.to_dict()
{'dist': 'Gamma', 'kwargs': {'alpha': 2.0, 'beta': 1.0}}
>>> Prior.from_dict(p.to_dict()) == p
True
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

LOG_2PI = math.log(2.0 * math.pi)

# family -> (numba code, its arguments in order, positive support)
NATIVE = {
    "LogNormal": (0, ("mu", "sigma"), True),
    "Gamma": (1, ("alpha", "beta"), True),
    "InverseGamma": (2, ("alpha", "beta"), True),
    "HalfNormal": (3, ("sigma",), True),
    "HalfCauchy": (4, ("beta",), True),
    "Exponential": (5, ("lam",), True),
    "Normal": (6, ("mu", "sigma"), False),
}
LOCATIONS = {"mu"}  # arguments that may be any finite number; the others must be > 0


class Prior:
    """A PyMC distribution by name and keyword arguments, e.g.
    ``Prior("LogNormal", mu=0.0, sigma=1.0)``.

    Parameters
    ----------
    distribution : str
        A PyMC distribution's class name (``pm.<distribution>``).
    **parameters : float
        Its keyword arguments (numbers).
    """

    def __init__(self, distribution: str, **parameters: float):
        import pymc as pm

        if not isinstance(distribution, str) or not hasattr(pm, distribution):
            raise ValueError(f"Prior: unknown PyMC distribution {distribution!r}")
        self.distribution = distribution
        self.parameters = {}
        for key, value in parameters.items():
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise TypeError(f"Prior({distribution!r}): {key} must be a number; got {value!r}")
            self.parameters[key] = float(value)
        if self.is_native:
            for key in NATIVE[distribution][1]:
                value = self.parameters[key]
                ok = math.isfinite(value) and (key in LOCATIONS or value > 0)
                if not ok:
                    need = "finite" if key in LOCATIONS else "a finite number > 0"
                    raise ValueError(
                        f"Prior({distribution!r}): {key} must be {need}; got {value!r}"
                    )

    # ------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        """``{"dist": name, "kwargs": {...}}``, pymc-extras' dictionary form."""
        return {"dist": self.distribution, "kwargs": dict(self.parameters)}

    @classmethod
    def from_dict(cls, data: dict) -> Prior:
        """Inverse of :meth:`to_dict`."""
        return cls(data["dist"], **data.get("kwargs", {}))

    def __eq__(self, other) -> bool:
        return isinstance(other, Prior) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.distribution, tuple(sorted(self.parameters.items()))))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.parameters.items())
        return f'Prior("{self.distribution}"{", " if args else ""}{args})'

    # ------------------------------------------------------------------ families
    @property
    def is_native(self) -> bool:
        """Whether the fast paths evaluate this prior in numba (see the module docstring)."""
        spec = NATIVE.get(self.distribution)
        return spec is not None and set(spec[1]) == set(self.parameters)

    @property
    def positive(self) -> bool:
        """Whether the support is ``θ > 0`` (else the real line); non-native families
        are asked of PyMC."""
        if self.distribution in NATIVE:
            return NATIVE[self.distribution][2]
        import pymc as pm

        # PyMC's own answer: a positive family has no density below zero
        return not np.isfinite(float(pm.logp(self.to_pymc_dist(), -1.0).eval()))

    def encoded(self) -> np.ndarray:
        """``(code, a, b)``: the family's numba code and its arguments (native only)."""
        code, names, _ = NATIVE[self.distribution]
        args = [self.parameters[n] for n in names] + [0.0] * (2 - len(names))
        return np.array([code, *args], dtype=float)

    def to_pymc(self, name: str, **kwargs):
        """The prior as a PyMC random variable ``name`` (inside a model)."""
        import pymc as pm

        params = {k: np.float64(v) for k, v in self.parameters.items()}
        return getattr(pm, self.distribution)(name, **params, **kwargs)

    def to_pymc_dist(self, **kwargs):
        """The prior as an unnamed PyMC distribution (``.dist``)."""
        import pymc as pm

        params = {k: np.float64(v) for k, v in self.parameters.items()}
        return getattr(pm, self.distribution).dist(**params, **kwargs)

    def sample(self, rng: np.random.Generator, size) -> np.ndarray:
        """Draws of ``θ`` of shape ``size``."""
        if not self.is_native:
            import pymc as pm

            seed = int(rng.integers(2**31))
            return np.asarray(pm.draw(self.to_pymc_dist(shape=size), random_seed=seed), float)
        p = self.parameters
        kind = self.distribution
        if kind == "LogNormal":
            return np.exp(rng.normal(p["mu"], p["sigma"], size))
        if kind == "Gamma":
            return rng.gamma(p["alpha"], size=size) / p["beta"]
        if kind == "InverseGamma":
            return p["beta"] / rng.gamma(p["alpha"], size=size)
        if kind == "HalfNormal":
            return np.abs(rng.normal(0.0, p["sigma"], size))
        if kind == "HalfCauchy":
            return np.abs(rng.standard_cauchy(size)) * p["beta"]
        if kind == "Exponential":
            return rng.exponential(1.0 / p["lam"], size)
        return rng.normal(p["mu"], p["sigma"], size)

    def center(self) -> float:
        """A central value of ``θ`` where a fit may start: the median (the mean for
        Gamma, as the built-in models start there)."""
        p, kind = self.parameters, self.distribution
        if kind == "LogNormal":
            return math.exp(p["mu"])
        if kind == "Gamma":
            return p["alpha"] / p["beta"]
        if kind == "InverseGamma":
            return p["beta"] / max(p["alpha"] - 1.0, 1.0)
        if kind == "HalfNormal":
            return 0.6745 * p["sigma"]
        if kind == "HalfCauchy":
            return p["beta"]
        if kind == "Exponential":
            return math.log(2.0) / p["lam"]
        if kind == "Normal":
            return p["mu"]
        return float(np.median(self.sample(np.random.default_rng(0), 2001)))


def as_prior(value, name: str) -> Prior:
    """``value`` as a :class:`Prior`: one already, or any object with pymc-extras'
    ``to_dict()`` form (``pymc_extras.prior.Prior``); a TypeError naming ``name``."""
    if isinstance(value, Prior):
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        data = to_dict()
        if isinstance(data, dict) and "dist" in data:
            kwargs = data.get("kwargs", {})
            nested = [k for k, v in kwargs.items() if isinstance(v, dict)]
            if nested or data.get("dims"):
                raise ValueError(
                    f"{name}: hierarchical or dimensioned priors are not supported here; "
                    f"got {data!r}"
                )
            return Prior.from_dict(data)
    raise TypeError(f"{name} must be a pp_decomp.Prior or pymc_extras Prior; got {value!r}")


@numba.njit(nogil=True, cache=True)
def log_prior(code, a, b, z):
    """``log p(θ)`` of a native family (:meth:`Prior.encoded`) at ``θ = e^z`` (real
    families: ``θ = z``), and its derivative in ``z``; no Jacobian."""
    if code == 0:  # LogNormal(mu, sigma)
        t = (z - a) / b
        return -z - math.log(b) - 0.5 * LOG_2PI - 0.5 * t * t, -1.0 - t / b
    if code == 1:  # Gamma(alpha, rate beta)
        x = math.exp(z)
        return a * math.log(b) - math.lgamma(a) + (a - 1.0) * z - b * x, (a - 1.0) - b * x
    if code == 2:  # InverseGamma(alpha, beta)
        x = math.exp(-z)
        return a * math.log(b) - math.lgamma(a) - (a + 1.0) * z - b * x, -(a + 1.0) + b * x
    if code == 3:  # HalfNormal(sigma)
        x2 = math.exp(2.0 * z) / (a * a)
        return math.log(2.0) - math.log(a) - 0.5 * LOG_2PI - 0.5 * x2, -x2
    if code == 4:  # HalfCauchy(beta)
        x2 = math.exp(2.0 * z) / (a * a)
        return math.log(2.0 / (math.pi * a)) - math.log1p(x2), -2.0 * x2 / (1.0 + x2)
    if code == 5:  # Exponential(lam)
        x = math.exp(z)
        return math.log(a) - a * x, -a * x
    t = (z - a) / b  # Normal(mu, sigma) on the real line
    return -math.log(b) - 0.5 * LOG_2PI - 0.5 * t * t, -t / b
