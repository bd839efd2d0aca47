"""``ComponentGP``: one observed component ``f_j`` as a PyMC marginal GP with priors."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pp_decomp.components.gp.base import MarginalGP
from pp_decomp.components.gp.builtin_form import builtin_form, resolved_priors
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.gp.pymc_model import compiled_model
from pp_decomp.components.inference.map_objective import map_problem
from pp_decomp.components.posterior.batched import JITTER, GPPosterior
from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.kernels import DEFAULT_KERNEL, KERNELS, Kernel, shorthand
from pp_decomp.prior import Prior, as_prior
from pp_decomp.validate import check_X

TRANSFORMS = ("standardize", "log", None)


def general(kernel, priors, noise) -> bool:
    """Whether ``kernel`` needs the general engine (not one the built-in takes)."""
    if not isinstance(kernel, Kernel):
        return False
    if noise is not None:
        noise = as_prior(noise, "noise")
    return builtin_form(kernel, priors or Priors(), noise) is None


def _checked(kernel, noise, transform, name: str) -> tuple[Kernel, Prior | None]:
    """``ComponentGP``'s kernel (a shorthand expanded) and noise prior, its
    ``transform`` checked, each refused naming the component and the value."""
    if transform not in TRANSFORMS:
        raise ValueError(
            f"component {name!r}: transform must be one of {TRANSFORMS}; got {transform!r}"
        )
    if noise is not None:
        noise = as_prior(noise, f"component {name!r}: noise")
        if not noise.positive:
            raise ValueError(f"component {name!r}: noise must have a positive prior; got {noise!r}")
    if isinstance(kernel, str):
        return shorthand(kernel), noise
    if not isinstance(kernel, Kernel):
        raise TypeError(
            f"component {name!r}: kernel must be a pp_decomp kernel or one of "
            f"{KERNELS}; got {kernel!r}"
        )
    return kernel, noise


class ComponentGP(MarginalGP):
    """A PyMC ``pm.gp.Marginal`` model of one component with a hyperparameter posterior.

    Example
    -------
    >>> import pp_decomp as ppd
    >>> from pp_decomp import Prior, kernels as K
    >>> rough = ppd.ComponentGP(K.Matern12(ls=Prior("InverseGamma", alpha=3, beta=0.6)))
    >>> rate = ppd.ComponentGP(K.Matern52(), transform="log")

    The model (:func:`pp_decomp.components.gp.pymc_model.build_model`) is

    ``ℓ_d ~ LogNormal`` (dimension-scaled), ``η ~ Gamma``, ``σ ~ LogNormal``
    (``α ~ Gamma`` for ``rq``),
    ``ỹ ~ MvNormal(0, η² k_ℓ(X̃, X̃) + c + (σ² + 10⁻⁶) I)``

    on unit-scaled inputs ``X̃ = (X - lower) / (upper - lower)`` and standardised
    outputs ``ỹ = (y - ȳ) / s_y``, where ``c = mean_sd²`` is an integrated
    constant mean (:class:`~pp_decomp.Priors`). Predictions are returned in the
    original units.

    Parameters
    ----------
    kernel : Kernel or {"se", "matern52", "matern32", "rq"}
        The covariance: a :mod:`pp_decomp.kernels` expression (``K.Matern12()``,
        ``K.ExpQuad() + K.Periodic(period=1.0, active_dims=[0])``), or a
        shorthand for a family with its default priors (aliases ``"expquad"``,
        ``"matern"``, ``"ratquad"``); default ``"matern32"``.
    input_dim : int, optional
        Number of input dimensions ``d``; by default taken from ``bounds``, the
        data at the first fit, or the problem in an optimisation loop.
    priors : Priors, optional
        The built-in priors (lengthscale, amplitude, noise, constant mean); a
        kernel's own :class:`~pp_decomp.Prior` objects override them.
    noise : Prior, optional
        The noise standard deviation's prior (default ``priors``'
        ``LogNormal(-4, 1.5)``), e.g. ``Prior("HalfNormal", sigma=0.1)``.
    transform : {"standardize", "log", None}
        How ``y`` is modelled: standardised (default); ``"log"``: ``log y``,
        standardised (positive data; a ValueError on ``y <= 0``), where
        :meth:`predict` and :meth:`sample` are of ``log y``; ``None``: as given.
    bounds : (2, d) array, optional
        Lower and upper input bounds used to scale inputs to the unit box. When
        omitted, inputs are used as given, so the default priors assume they
        span roughly a unit range.
    standardize : bool
        Standardise ``y`` before fitting (default). With ``False`` the GP has a
        known constant prior mean in the original units (no integrated constant
        mean), as in the papers' known-kernel studies.
    name : str
        Component name used in warnings and labels.
    max_draws : int
        Hyperparameter draws kept for prediction (evenly thinned from the
        posterior); the full posterior stays in :attr:`idata`.
    warp : {"sinh-arcsinh"}, optional
        A learned monotone warp of the standardised outputs, with ``skew=`` and
        ``tail=`` priors: the model is then a
        :class:`~pp_decomp.components.gp.warped.WarpedGP`.

    Attributes
    ----------
    idata : xarray.DataTree
        The last fit's posterior (one draw for ``"map"``).
    draws : HyperDraws
        The draws used for prediction.
    diagnostics : FitDiagnostics
        Convergence summary of the last fit.
    """

    label = "component"
    draws_type = HyperDraws

    # subclasses for models the built-in engine does not take, each with ``takes``
    variants: list[type[ComponentGP]] = []

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "takes" in cls.__dict__:
            ComponentGP.variants.append(cls)

    def __new__(
        cls, kernel=DEFAULT_KERNEL, *args, priors=None, noise=None, build=None, warp=None, **kwargs
    ):
        if cls is ComponentGP:
            for variant in ComponentGP.variants:
                if variant.takes(kernel, priors, noise, build, warp):
                    return super().__new__(variant)
        return super().__new__(cls)

    def __init__(
        self,
        kernel: str | Kernel = DEFAULT_KERNEL,
        input_dim: int | None = None,
        *,
        priors: Priors | None = None,
        noise: Prior | None = None,
        transform: str | None = "standardize",
        bounds=None,
        standardize: bool = True,
        name: str = "f",
        max_draws: int = 256,
        warp: str | None = None,
    ):
        name = str(name)
        if warp is not None:  # a WarpedGP's own __init__ takes it
            raise ValueError(f"component {name!r}: {type(self).__name__} takes no warp={warp!r}")
        kernel, noise = _checked(kernel, noise, transform, name)
        self.model_kernel, self.transform = kernel, transform
        # what a loop builds this component's GPs from (pp_decomp.loop.component_models)
        self.template = {"kernel": kernel, "priors": priors, "noise": noise, "transform": transform}
        super().__init__(
            input_dim,
            priors=priors,
            bounds=bounds,
            standardize=standardize and transform is not None,
            name=name,
            max_draws=max_draws,
        )
        self._setup_kernel(kernel, noise)

    @classmethod
    def from_pymc(
        cls,
        build,
        *,
        input_dim: int | None = None,
        transform: str | None = "standardize",
        bounds=None,
        name: str = "f",
        max_draws: int = 256,
    ) -> ComponentGP:
        """A component GP of your own PyMC model: ``build(X, y)`` returns ``(model,
        gp)``, a ``pm.Model`` whose likelihood is ``gp.marginal_likelihood(name, X=X,
        y=y, sigma=...)`` of a ``pm.gp.Marginal`` ``gp`` on the ``pm.Data`` ``X`` and ``y``
        it is given (:mod:`pp_decomp.components.gp.pymc_gp`; an example in
        ``docs/component-models.md``)."""
        return cls(
            build=build,
            input_dim=input_dim,
            transform=transform,
            bounds=bounds,
            name=name,
            max_draws=max_draws,
        )

    def _setup_kernel(self, kernel: Kernel, noise: Prior | None) -> None:
        self.kernel, self._prior_fields = builtin_form(kernel, self.priors, noise)
        self.noise = noise
        self._resolve_priors()

    def _resolve_priors(self) -> None:
        if self.input_dim is not None and self._prior_fields is not None:
            self.priors = resolved_priors(self.priors, self._prior_fields, self.input_dim)
            self._prior_fields = None

    def _set_data(self, X, y, min_rows: int = 2, mean: float = 0.0):
        out = super()._set_data(X, y, min_rows, mean)
        self._resolve_priors()  # the input dimension is known from here on
        return out

    def _transformed(self, y: np.ndarray) -> np.ndarray:
        if self.transform != "log":
            return y
        bad = np.flatnonzero(~(y > 0))
        if len(bad):
            raise ValueError(
                f"component {self.name!r}: transform='log' needs y > 0; got y[{bad[0]}] = "
                f"{float(y[bad[0]])!r}"
            )
        return np.log(y)

    def model_dict(self) -> dict:
        """The component's model as plain data: kernel expression, priors, transform."""
        from dataclasses import asdict

        t = self.template
        return {
            "kernel": self.model_kernel.to_dict(),
            "noise": None if t["noise"] is None else t["noise"].to_dict(),
            "transform": self.transform,
            "priors": None if t["priors"] is None else asdict(t["priors"]),
        }

    @property
    def mean_var(self) -> float:
        """Prior variance of the integrated constant mean (0 without standardisation)."""
        return self.priors.mean_var if self.standardize else 0.0

    def hyper_names(self) -> list[str]:
        """The model's hyperparameters, as named in its PyMC model and its draws."""
        return ["ls", "eta", "sigma"] + (["alpha"] if self.kernel == "rq" else [])

    def _compiled(self):
        priors = self.priors if self.standardize else replace(self.priors, mean_sd=0.0)
        return compiled_model(self.kernel, self.input_dim, priors)

    @property
    def posterior_kernel(self) -> str:
        """The kernel the numpy posteriors evaluate
        (:func:`~pp_decomp.components.posterior.batched.draws_cov`)."""
        return self.kernel

    def sample_prior(self, S: int, rng: np.random.Generator) -> HyperDraws:
        """``S`` independent draws of the hyperparameters from their priors."""
        return self.priors.sample(self.kernel, self.input_dim, S, rng)

    def log_prior_variance(self, name: str) -> float:
        """The prior variance of ``log θ`` for ``name`` in ``("eta", "sigma")``."""
        return self.priors.log_variance(name)

    def _check_draws(self, draws: HyperDraws) -> None:
        if draws.input_dim != self.input_dim:
            raise ValueError(
                f"draws.ls has {draws.input_dim} column(s) but input_dim is {self.input_dim}"
            )
        if (draws.alpha is None) != (self.kernel != "rq"):
            raise ValueError(
                f"draws.alpha must be given exactly for kernel 'rq'; kernel is "
                f"{self.kernel!r} and alpha is {draws.alpha!r}"
            )

    def _make_posterior(self, Xs, ys, draws: HyperDraws) -> GPPosterior:
        return GPPosterior(self.kernel, Xs, ys, draws, JITTER, self.mean_var)

    def _map_problem(self, Xs, ys, restarts, rng, init):
        return map_problem(self, Xs, ys, restarts, rng, init)

    # -------------------------------------------------------------- prediction
    def prior_cov(self, X1, X2) -> np.ndarray:
        """Prior covariance per draw in original units: (S, n1, n2)."""
        X1 = self.scale_X(check_X(X1, "X1", input_dim=self.input_dim, min_rows=0))
        X2 = self.scale_X(check_X(X2, "X2", input_dim=self.input_dim, min_rows=0))
        return self.y_std**2 * self.posterior.prior_cov(X1, X2)

    @property
    def prior_var(self) -> np.ndarray:
        """Prior variance ``s_y² (k(x, x) + c)`` per draw at the unit box's origin: (S,)."""
        x0 = np.zeros((1, self.input_dim))
        return self.y_std**2 * self.posterior.prior_var(x0)[:, 0]

    def __repr__(self) -> str:
        fitted = "unfitted" if self._posterior is None else f"S={self.draws.n_draws}"
        return f"ComponentGP({self.name!r}, kernel={self.kernel!r}, d={self.input_dim}, {fitted})"
