"""A component GP on any kernel expression: ``ComponentGP``'s general engine.

``ComponentGP(K.ExpQuad() + K.Periodic(period=1.0, active_dims=[0]))`` is a
:class:`KernelGP`: the same model as the built-in kernels
(``y ~ MvNormal(0, k_θ(X, X) + c + (σ² + jitter) I)``, ``c`` the integrated
constant mean) with the expression's kernel, its priors and a noise prior.
MAP, NUTS (nutpie on the numba density of
:mod:`~pp_decomp.components.gp.kernel_density`), importance reweighting and the
batched posterior all evaluate the kernel through its families' one
definition; :meth:`KernelGP.pymc_model` is the PyMC model, the reference the
tests compare against.
"""

from __future__ import annotations

import json
import threading
import warnings
from functools import cached_property, partial

import numpy as np

from pp_decomp.components.gp.gp import ComponentGP, general
from pp_decomp.components.gp.kernel_density import densities
from pp_decomp.components.gp.pymc_model import JitteredCenter
from pp_decomp.components.inference.compiled import CompiledModel, compiled, penalty
from pp_decomp.components.inference.native import NutsModel, _check_xy
from pp_decomp.components.posterior.batched import JITTER, GPPosterior
from pp_decomp.components.posterior.draws import KernelDraws
from pp_decomp.kernels.bound import BoundKernel
from pp_decomp.kernels.warping import check_unit_box
from pp_decomp.prior import Prior
from pp_decomp.validate import check_X

_BOX = {"eta": (-7.0, 5.0), "sigma": (-12.0, 3.0)}
_LOG_BOX = (-7.0, 7.0)


class KernelModel(CompiledModel):
    """A kernel expression's component model for NUTS and MAP: the flat sampled
    vector ``z`` (the free parameters, then ``log σ``), its priors, and nutpie's
    model of the numba density."""

    def __init__(self, bound: BoundKernel, noise: Prior, mean_var: float):
        self.bound, self.noise, self.mean_var = bound, noise, float(mean_var)
        self.slots, self.positive = bound.free_index
        rows, self.python_priors, q = [], [], 0
        for f in [*bound.free, None]:
            prior, size = (noise, 1) if f is None else (f.prior, len(f.slots))
            positive = True if f is None else f.positive
            row = prior.encoded() if prior.is_native else np.array([-1.0, 0.0, 0.0])
            rows.extend([row] * size)
            if not prior.is_native:
                self.python_priors.append((slice(q, q + size), prior, positive))
            q += size
        self.priors = np.ascontiguousarray(rows, dtype=float)
        self.log_density, self.log_values, self.logp = densities(bound.kfun)
        self._lock = threading.Lock()  # a PyTensor function keeps its storage: one thread
        self.label = f"kernel GP model ({bound.kernel!r}, d={bound.input_dim})"

    @property
    def ndim(self) -> int:
        return len(self.slots) + 1

    @property
    def value_names(self) -> list[str]:
        names = [f"{f.name}_log__" if f.positive else f.name for f in self.bound.free]
        return [*names, "sigma_log__"]

    def sizes(self) -> list[int]:
        """Coordinates per value name."""
        return [len(f.slots) for f in self.bound.free] + [1]

    def shapes(self) -> list[tuple]:
        """Shape per value name (``(size,)`` for ARD, ``()`` otherwise)."""
        return [self.bound.shapes[f.name] for f in self.bound.free] + [()]

    def args(self) -> tuple:
        """The numba densities' constants after the data: slots, transforms, priors,
        ``m`` and the jitter."""
        return (self.slots, self.positive, self.priors, self.mean_var, JITTER)

    @cached_property
    def _python_terms(self):
        """The log density of the priors numba does not know, by PyTensor: ``z -> (value,
        gradient)``, or ``None``."""
        if not self.python_priors:
            return None
        import pymc as pm
        import pytensor
        import pytensor.tensor as pt

        z = pt.dvector("z")
        total = 0.0
        for part, prior, positive in self.python_priors:
            theta = pt.exp(z[part]) if positive else z[part]
            total = total + pm.logp(prior.to_pymc_dist(), theta).sum()
        fn = pytensor.function([z], [total, pt.grad(total, z)])

        def terms(values):
            with self._lock:
                value, grad = fn(values)
                return float(value), np.array(grad)

        return terms

    def density(self, z, X, y, jacobian: bool) -> tuple[float, np.ndarray]:
        """``log p(θ | y)`` (with or without the Jacobian) and its gradient in ``z``."""
        value, grad = self.log_density(z, X, y, self.bound.theta0, *self.args(), jacobian)
        if self._python_terms is not None and np.isfinite(value):
            v, g = self._python_terms(z)
            value, grad = value + float(v), grad + g
        return value, grad

    def log_posterior(self, Z: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The log density NUTS samples at the rows of ``Z (M, k)``: (M,)."""
        Z = np.ascontiguousarray(Z, dtype=float)
        X, y = np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(y, dtype=float)
        out = self.log_values(Z, X, y, self.bound.theta0, *self.args())
        if self._python_terms is not None:
            out = out + np.array([float(self._python_terms(z)[0]) for z in Z])
        return out

    def unflatten(self, Z: np.ndarray) -> dict:
        """Flat rows ``Z (M, k)`` as one ``(M, ...)`` array per value name."""
        out, q = {}, 0
        for name, size, shape in zip(self.value_names, self.sizes(), self.shapes(), strict=True):
            out[name] = Z[:, q : q + size] if shape else Z[:, q]
            q += size
        return out

    def to_draws(self, Z: np.ndarray) -> KernelDraws:
        """The draws the rows of ``Z`` are."""
        parts = self.unflatten(np.atleast_2d(Z))
        return KernelDraws(
            {
                n.removesuffix("_log__"): (np.exp(v) if n.endswith("_log__") else v)
                for n, v in parts.items()
            }
        )

    def center(self) -> np.ndarray:
        """The priors' centres in ``z``."""
        out = []
        for f in self.bound.free:
            c = f.prior.center()
            out.extend([np.log(c) if f.positive else c] * len(f.slots))
        return np.array([*out, np.log(self.noise.center())])

    def sample_z(self, rng: np.random.Generator) -> np.ndarray:
        """One draw of ``z`` from the priors."""
        out = []
        for f in self.bound.free:
            v = np.atleast_1d(f.prior.sample(rng, len(f.slots)))
            out.extend(np.log(v) if f.positive else v)
        return np.array([*out, np.log(self.noise.sample(rng, 1)[0])])

    def bounds(self) -> list:
        """The MAP search box of ``z``."""
        box = []
        for f in self.bound.free:
            base = f.name.split("_")[0]
            b = _BOX.get(base, _LOG_BOX) if f.positive else (None, None)
            box.extend([b] * len(f.slots))
        return [*box, _BOX["sigma"]]

    @cached_property
    def nutpie_model(self):
        names = [n.removesuffix("_log__") for n in self.value_names]
        logs = [n.endswith("_log__") for n in self.value_names]
        stored = [*self.value_names, *[n for n, lg in zip(names, logs, strict=True) if lg]]
        shapes = [*self.shapes(), *[s for s, lg in zip(self.shapes(), logs, strict=True) if lg]]
        return NutsModel(
            ndim=self.ndim,
            make_logp=partial(_chain_logp, model=self),
            make_expand=partial(_Expand, self.value_names, self.sizes(), self.shapes()),
            names=tuple(stored),
            shapes=tuple(shapes),
            shared_data={"X": np.zeros((3, self.bound.input_dim)), "y": np.zeros(3)},
            initial_point=JitteredCenter(self.center()),
            check=_check_xy,
        )


def _chain_logp(X, y, *, model: KernelModel):
    grad = np.zeros(model.ndim)
    fast = partial(model.logp, X, y, model.bound.theta0, *model.args(), grad)
    if model._python_terms is None:
        return fast

    def logp(z):
        value, g = fast(z)
        if not np.isfinite(value):
            return value, g
        v, gp = model._python_terms(z)
        g += gp
        return value + float(v), g

    return logp


class _Expand:
    """One chain's ``z -> {name_log__: part, name: exp(part)}`` (a real parameter:
    ``{name: part}``), refilled at every call."""

    def __init__(self, value_names, sizes, shapes):
        ends = np.cumsum(sizes)
        self.parts = [
            (n, slice(e - s, e), sh)
            for n, s, e, sh in zip(value_names, sizes, ends, shapes, strict=True)
        ]

    def __call__(self, z: np.ndarray) -> dict:
        out = {name: np.array(z[part]).reshape(shape) for name, part, shape in self.parts}
        for name, _, _ in self.parts:  # nutpie takes them in the order of its names
            if name.endswith("_log__"):
                out[name.removesuffix("_log__")] = np.array(np.exp(out[name]))
        return out


class KernelGP(ComponentGP):
    """``ComponentGP`` on a kernel expression (see the module docstring); made by
    ``ComponentGP(kernel)`` where the built-in engine cannot take ``kernel``."""

    draws_type = KernelDraws

    @staticmethod
    def takes(kernel, priors, noise, build, warp) -> bool:
        """Whether ``ComponentGP(kernel, priors=, noise=, build=)`` is a ``KernelGP``."""
        return build is None and warp is None and general(kernel, priors, noise)

    def _setup_kernel(self, kernel, noise) -> None:
        self.kernel = kernel
        self.noise = noise if noise is not None else self.priors.sigma_prior()
        self._bound, self._prior_fields = None, None

    @property
    def bound(self) -> BoundKernel:
        """The kernel on this GP's inputs (after the input dimension is known), shared
        by every GP of the same structure: its numba functions compile once."""
        if self._bound is None:
            if self.input_dim is None:
                raise RuntimeError(f"component {self.name!r}: the input dimension is not known yet")
            widths = None if self.bounds is None else self.bounds[1] - self.bounds[0]
            make = partial(BoundKernel, self.kernel, self.input_dim, widths, self.name)
            self._bound = compiled(("bound", *self._structure()), make)
        return self._bound

    def _structure(self) -> tuple:
        """What identifies the kernel on these inputs: the expression, its families'
        classes (the objects: a notebook cell run twice defines a new class of the
        same name), the input dimension and the input box's widths."""
        widths = None if self.bounds is None else (self.bounds[1] - self.bounds[0]).tolist()
        families = tuple(type(f) for f in self.kernel.leaves())
        expression = json.dumps(self.kernel.to_dict(), sort_keys=True)
        return expression, families, self.input_dim, json.dumps(widths)

    def _set_data(self, X, y, min_rows: int = 2, mean: float = 0.0):
        X = check_X(X, "X", input_dim=self.input_dim, min_rows=min_rows)
        if self.input_dim is None:
            self.input_dim = X.shape[1]
        # before the GP takes the data: a refused fit leaves the last one in place
        check_unit_box(self.bound, X, self.scale_X(X), self.name, bounds=self.bounds)
        return super()._set_data(X, y, min_rows, mean)

    def _Xnew(self, Xnew):
        X = check_X(Xnew, "Xnew", input_dim=self.input_dim)
        Xs = self.scale_X(X)
        # an optimiser's step may overshoot the box by rounding; a user's point may not
        check_unit_box(self.bound, X, Xs, self.name, bounds=self.bounds, arg="Xnew", tol=1e-6)
        return Xs

    def hyper_names(self) -> list[str]:
        return [*self.bound.names, "sigma"]

    def _compiled(self) -> KernelModel:
        noise = json.dumps(self.noise.to_dict(), sort_keys=True)
        key = ("kernel", *self._structure(), noise, self.mean_var)
        bound = self.bound  # first: the cache's lock is held while a model is made
        model = compiled(key, lambda: KernelModel(bound, self.noise, self.mean_var))
        if model.python_priors and not getattr(model, "_warned", False):
            model._warned = True
            names = [p.distribution for _, p, _ in model.python_priors]
            warnings.warn(
                f"component {self.name!r}: priors {names} are evaluated by PyMC (slower); "
                f"the fast families are LogNormal, Gamma, InverseGamma, HalfNormal, "
                f"HalfCauchy, Exponential and Normal",
                stacklevel=3,
            )
        return model

    @property
    def posterior_kernel(self) -> BoundKernel:
        """The kernel the numpy posteriors evaluate
        (:func:`~pp_decomp.components.posterior.batched.draws_cov`)."""
        return self.bound

    def sample_prior(self, S: int, rng: np.random.Generator) -> KernelDraws:
        """``S`` independent draws of the hyperparameters from their priors."""
        cm = self._compiled()
        return cm.to_draws(np.array([cm.sample_z(rng) for _ in range(S)]))

    def log_prior_variance(self, name: str) -> float:
        """The prior variance of ``log θ`` for hyperparameter ``name`` (by 4000 prior
        draws, seeded: the same every call)."""
        prior = (
            self.noise
            if name == "sigma"
            else next(f.prior for f in self.bound.free if f.name == name)
        )
        return float(np.var(np.log(prior.sample(np.random.default_rng(0), 4000))))

    def _check_draws(self, draws: KernelDraws) -> None:
        if sorted(draws.values) != sorted(self.hyper_names()):
            raise ValueError(
                f"draws must hold {self.hyper_names()} for this kernel; got {sorted(draws.values)}"
            )

    def _make_posterior(self, Xs, ys, draws: KernelDraws) -> GPPosterior:
        return GPPosterior(self.bound, Xs, ys, draws, JITTER, self.mean_var)

    def _unconstrained(self, init: KernelDraws, cm: KernelModel) -> np.ndarray:
        parts = {}
        for name in cm.value_names:
            base = name.removesuffix("_log__")
            v = init.values[base]
            parts[name] = np.log(v) if name.endswith("_log__") else v
        return cm.flatten_rows(parts)

    def numpy_density(self):
        """``(log_posterior, to_draws)`` of the sampler
        (:mod:`~pp_decomp.components.inference.refresh`)."""
        cm = self._compiled()
        return cm.log_posterior, cm.to_draws

    def _map_problem(self, Xs, ys, restarts, rng, init):
        cm = self._compiled()
        X, y = np.ascontiguousarray(Xs, dtype=float), np.ascontiguousarray(ys, dtype=float)

        def objective(z):
            value, grad = cm.density(np.ascontiguousarray(z, dtype=float), X, y, False)
            if not np.isfinite(value):
                return penalty(z)
            return -value, -grad

        if init is not None:
            starts = [self._unconstrained(init, cm).mean(0)]
        else:
            starts = [cm.center()]
        starts += [cm.sample_z(rng) for _ in range(restarts - 1)]
        return objective, starts, cm.bounds(), cm.to_draws

    def pymc_model(self, X, y):
        """The PyMC model on model-scale data ``X (n, d)``, ``y (n,)``: the reference
        the fast paths are tested against."""
        import pymc as pm

        with pm.Model() as model:
            values = {}
            for f in self.bound.free:
                shape = self.bound.shapes[f.name]
                values[f.name] = f.prior.to_pymc(f.name, shape=shape if shape else None)
            sigma = self.noise.to_pymc("sigma")
            cov = self.bound.to_pymc(values)
            if self.mean_var > 0:
                cov = cov + pm.gp.cov.Constant(self.mean_var)
            gp = pm.gp.Marginal(cov_func=cov)
            gp.marginal_likelihood(
                "y_obs", X=np.asarray(X), y=np.asarray(y), sigma=sigma, jitter=JITTER
            )
        return model

    def __repr__(self) -> str:
        fitted = "unfitted" if self._posterior is None else f"S={self.draws.n_draws}"
        return f"ComponentGP({self.name!r}, kernel={self.kernel!r}, {fitted})"
