"""A component GP from the user's own PyMC model: ``ComponentGP.from_pymc(build)``.

``build(X, y)`` returns ``(model, gp)``: a ``pm.Model`` whose likelihood is
``gp.marginal_likelihood(..., X=X, y=y, sigma=...)`` of a ``pm.gp.Marginal``
``gp`` (any covariance, any priors, extra parameters welcome). ``X`` and ``y``
are ``pm.Data`` containers made here (the model's scale: unit-box inputs,
standardised outputs; named ``pp_decomp_X`` and ``pp_decomp_y``, so any name of
the user's is free, ``"y"`` included), so the model is built and compiled once
per structure and every refit swaps the data:

* NUTS: nutpie's public PyMC path (:func:`nutpie.compile_pymc_model`, then
  ``with_data``), checked and repaired as every fit is;
* MAP: L-BFGS-B on the model's log density and gradient, compiled once;
* prediction: the covariance ``gp.cov_func`` and the noise ``gp.sigma``
  compiled once, vectorised over the hyperparameter draws
  (``pytensor.graph.replace.vectorize_graph``), then the same batched posterior,
  incremental updates and importance sampling as every other component.

``X.shape[1]`` is symbolic, as of every ``pm.Data``: a ``build(X, y,
input_dim)`` is given the column count as an ``int``, for
``pm.gp.cov.Matern52(input_dim, ...)``.

The GP's mean is taken to be zero on the standardised outputs (add
``pm.gp.cov.Constant`` to the covariance for a mean to be learnt).
"""

from __future__ import annotations

import inspect
import sys
import threading
from functools import cached_property
from pathlib import Path

import numpy as np

from pp_decomp.components.gp.gp import ComponentGP
from pp_decomp.components.inference.compiled import CompiledModel, compiled, penalty
from pp_decomp.components.inference.nuts import sample_kwargs
from pp_decomp.components.posterior.batched import JITTER, GPPosterior
from pp_decomp.components.posterior.draws import KernelDraws, stacked
from pp_decomp.validate import int_seed

# the names of the data containers build is given
DATA_X, DATA_Y = "pp_decomp_X", "pp_decomp_y"
# the MAP search's box of a log-transformed coordinate: the widest of the built-in
# models' boxes (SEARCH_BOX: a noise sd down to e^-12, a lengthscale up to e^7)
LOG_BOX = (-12.0, 7.0)


def call_build(build, X, y, input_dim: int, where: str):
    """``build(X, y)``, or ``build(X, y, input_dim)`` where build names a parameter
    ``input_dim`` or takes a third positional one without a default; a build that
    takes ``X.shape[1]`` for a number is told what to do."""
    try:
        params = list(inspect.signature(build).parameters.values())
    except (TypeError, ValueError):  # a callable without a signature
        params = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    third = params[2] if len(params) > 2 else None
    named = any(p.name == "input_dim" and p.kind != p.POSITIONAL_ONLY for p in params)
    third_wanted = (
        third is not None and third.kind in positional and third.default is inspect.Parameter.empty
    )
    try:
        if named:
            return build(X, y, input_dim=input_dim)
        return build(X, y, input_dim) if third_wanted else build(X, y)
    except TypeError as err:
        if "TensorVariable" not in str(err):
            raise
        raise TypeError(
            f"{where}: {err} (X is a pm.Data, so X.shape[1] is symbolic in PyMC; "
            f"write build(X, y, input_dim) to be given the column count, here {input_dim})"
        ) from err


def build_name(build) -> str:
    """``MODULE.QUALNAME`` of a build function, as a run records it. A script's
    (``__main__``) is named by the module it is run as (``python -m pkg.mine``:
    ``pkg.mine``) or its file's stem (``python mine.py``: ``mine``), the module
    ``--components mine:...`` imports; a notebook's stays ``__main__``."""
    module = getattr(build, "__module__", "?")
    if module == "__main__":
        main = sys.modules.get("__main__")
        spec, path = getattr(main, "__spec__", None), getattr(main, "__file__", None)
        if getattr(spec, "name", None) and spec.name != "__main__":
            module = spec.name
        elif path:
            module = Path(path).stem
    return f"{module}.{getattr(build, '__qualname__', repr(build))}"


class PyMCModel(CompiledModel):
    """The user's model on ``pm.Data`` ``X (n, d)`` and ``y (n,)``, built once, and
    what the fits and predictions compile from it (each once, when first used)."""

    def __init__(self, build, input_dim: int, component: str):
        import pymc as pm

        where = f"component {component!r}: from_pymc(build)"
        with pm.Model() as root:
            # names no user picks (a user's likelihood is often named "y"), and a
            # static column count (X.type.shape[1] is a Python int)
            X = pm.Data(DATA_X, np.zeros((3, input_dim)), shape=(None, input_dim))
            y = pm.Data(DATA_Y, np.zeros(3), shape=(None,))
            out = call_build(build, X, y, int(input_dim), where)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(f"{where} must return (model, gp); got {out!r}")
        model, gp = out
        if not isinstance(model, pm.Model):
            raise TypeError(f"{where} must return a pm.Model first; got {model!r}")
        if not isinstance(gp, pm.gp.Marginal):
            raise TypeError(f"{where} must return a pm.gp.Marginal second; got {gp!r}")
        if getattr(gp, "X", None) is not X or len(root.observed_RVs) != 1:
            raise ValueError(
                f"{where}: the model's one likelihood must be gp.marginal_likelihood(name, "
                "X=X, y=y, sigma=...) on the X and y build was given"
            )
        named = [rv for rv in root.free_RVs if rv.name == "sigma"]
        if named and getattr(gp.sigma, "sigma", None) is not named[0]:
            # the draws call the likelihood's noise sd "sigma", which would overwrite it
            raise ValueError(
                f"{where}: the variable 'sigma' is not the likelihood's noise sd, and "
                "'sigma' is the name the draws give that sd; rename the variable"
            )
        self.root, self.gp, self.component = root, gp, component
        self.input_dim = int(input_dim)
        self.rvs = list(root.free_RVs)
        self.names = [rv.name for rv in self.rvs]
        self.values = [root.rvs_to_values[rv] for rv in self.rvs]
        point = root.initial_point()
        self.shapes = [tuple(np.shape(point[v.name])) for v in self.values]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.label = f"PyMC model of component {component!r}"
        # the data are shared variables, and a compiled PyTensor function keeps its
        # storage: one thread at a time (refits run in the background)
        self._lock = threading.RLock()

    @property
    def value_names(self) -> list[str]:
        return [v.name for v in self.values]

    @cached_property
    def nutpie_model(self):
        import nutpie

        return nutpie.compile_pymc_model(self.root, freeze_model=False)

    # ------------------------------------------------------------- conversions
    @cached_property
    def _natural(self):
        import pytensor

        outs = self.root.replace_rvs_by_values(self.rvs)
        return pytensor.function(self.values, outs)

    def unflatten(self, Z: np.ndarray) -> dict:
        """Flat unconstrained rows ``Z (M, k)`` as one ``(M, ...)`` array per value name."""
        out, q = {}, 0
        for name, size, shape in zip(self.value_names, self.sizes, self.shapes, strict=True):
            out[name] = Z[:, q : q + size].reshape((len(Z), *shape))
            q += size
        return out

    def to_draws(self, Z: np.ndarray) -> KernelDraws:
        """The draws the unconstrained rows ``Z`` are, with the noise sd as ``sigma``."""
        Z = np.atleast_2d(Z)
        parts = self.unflatten(Z)
        with self._lock:
            rows = [self._natural(*[parts[n][i] for n in self.value_names]) for i in range(len(Z))]
        values = {n: np.array([r[k] for r in rows]) for k, n in enumerate(self.names)}
        return self.completed(values)

    def completed(self, values: dict) -> KernelDraws:
        """Draws of the free variables with the noise sd ``sigma`` they imply."""
        values = {n: np.asarray(values[n], dtype=float) for n in self.names}
        return KernelDraws({**values, "sigma": np.sqrt(self.noise_var(values))})

    @cached_property
    def _unnatural(self):
        """The inverse of :attr:`_natural`: the free variables' values to the value
        variables (PyMC's transforms, forward), compiled once."""
        import pytensor
        from pytensor.graph.replace import graph_replace

        ins = [rv.type() for rv in self.rvs]
        outs = []
        for rv, x in zip(self.rvs, ins, strict=True):
            transform = self.root.rvs_to_transforms.get(rv)
            outs.append(x if transform is None else transform.forward(x, *rv.owner.inputs))
        outs = graph_replace(outs, dict(zip(self.rvs, ins, strict=True)), strict=False)
        return pytensor.function(ins, outs, on_unused_input="ignore")

    def unconstrained(self, draws: KernelDraws | dict) -> np.ndarray:
        """The rows of ``z`` the draws (or a dict of the free variables' ``(S, ...)``
        values) are, by PyMC's own transforms: (S, k)."""
        named = draws.values if isinstance(draws, KernelDraws) else draws
        values = [np.asarray(named[n], dtype=float) for n in self.names]
        with self._lock:
            rows = [self._unnatural(*[v[i] for v in values]) for i in range(len(values[0]))]
        return np.array([np.concatenate([np.ravel(part) for part in row]) for row in rows])

    def chain_rows(self, posterior) -> np.ndarray:
        """The flat unconstrained rows of a nutpie run's ``posterior`` group, which
        holds the free variables on their own scale (nutpie's PyMC path stores no
        value variables): (C * D, k)."""
        C, D = posterior.sizes["chain"], posterior.sizes["draw"]
        values = {
            n: posterior[n].values.reshape(C * D, *s)
            for n, s in zip(self.names, self.shapes, strict=True)
        }
        return self.unconstrained(values)

    # ----------------------------------------------------- batched covariances
    @cached_property
    def _batched(self):
        import pytensor
        import pytensor.tensor as pt
        from pytensor.graph.replace import vectorize_graph

        A, B = pt.dmatrix("A"), pt.dmatrix("B")
        batched = {
            rv: pt.tensor(f"{rv.name}_draws", shape=(None,) * (rv.ndim + 1), dtype="float64")
            for rv in self.rvs
        }
        inputs = list(batched.values())
        outs = [self.gp.cov_func(A, B), self.gp.cov_func(A, diag=True), self.gp.sigma(A, diag=True)]
        outs = [vectorize_graph(o, replace=batched) for o in outs]
        cov = pytensor.function([*inputs, A, B], outs[0], on_unused_input="ignore")
        diag = pytensor.function([*inputs, A], outs[1], on_unused_input="ignore")
        noise = pytensor.function([*inputs, A], outs[2], on_unused_input="ignore")
        return cov, diag, noise

    def theta(self, values: dict) -> dict:
        """The free variables' draws by name (what :meth:`matrix` takes)."""
        return {n: np.asarray(values[n], dtype=float) for n in self.names}

    def _args(self, values: dict) -> list:
        S = len(np.atleast_1d(values[self.names[0]]))
        return [
            np.asarray(values[n], dtype=float).reshape(S, *s)
            for n, s in zip(self.names, self.shapes, strict=True)
        ]

    def matrix(self, X1, X2, values: dict) -> np.ndarray:
        """``k(X1, X2)`` per draw: (S, n1, n2)."""
        with self._lock:
            cov = self._batched[0](
                *self._args(values), np.asarray(X1, float), np.asarray(X2, float)
            )
        S = len(np.atleast_1d(values[self.names[0]]))
        return np.broadcast_to(cov, (S, len(X1), len(X2))).copy()

    def diag(self, X, values: dict) -> np.ndarray:
        """``k(x, x)`` at the rows of ``X`` per draw: (S, m)."""
        with self._lock:
            out = self._batched[1](*self._args(values), np.asarray(X, float))
        S = len(np.atleast_1d(values[self.names[0]]))
        return np.broadcast_to(out, (S, len(X))).copy()

    def noise_var(self, values: dict) -> np.ndarray:
        """The likelihood's noise variance per draw (jitter apart): (S,)."""
        with self._lock:
            out = self._batched[2](*self._args(values), np.zeros((1, self.input_dim)))
        S = len(np.atleast_1d(values[self.names[0]]))
        return np.broadcast_to(np.asarray(out).reshape(-1, 1)[:, 0], (S,)).copy()

    # ---------------------------------------------------------------- densities
    @cached_property
    def _logp(self):
        return self.root.compile_logp(jacobian=True)

    @cached_property
    def _map_fns(self):
        return self.root.compile_logp(jacobian=False), self.root.compile_dlogp(jacobian=False)

    def _point(self, z: np.ndarray) -> dict:
        return {n: v[0] for n, v in self.unflatten(np.atleast_2d(z)).items()}

    def log_posterior(self, Z: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The log density NUTS samples at the rows of ``Z (M, k)`` on ``(X, y)``: (M,)."""
        with self._lock:
            self.root.set_data(DATA_X, X)
            self.root.set_data(DATA_Y, y)
            return np.array([float(self._logp(self._point(z))) for z in np.atleast_2d(Z)])

    def search_box(self) -> list[tuple]:
        """The MAP search's box of ``z``: :data:`LOG_BOX` on the coordinates PyMC
        log-transforms (its value variables ``name_log__``), unbounded elsewhere.

        Without a mode in the prior, a scale's mode can be 0: a HalfNormal noise sd on
        data fitted to the jitter has its density rising as ``log σ → -∞``, where the
        search otherwise wanders until ``σ`` underflows to 0 (the built-in models
        search within :data:`~pp_decomp.components.inference.compiled.SEARCH_BOX`)."""
        box = []
        for name, size in zip(self.value_names, self.sizes, strict=True):
            box += [LOG_BOX if name.endswith("_log__") else (None, None)] * size
        return box

    def map_objective(self, X, y):
        """``z -> (-log p, -gradient)`` without the Jacobian, on ``(X, y)``."""
        logp, dlogp = self._map_fns

        def objective(z):
            with self._lock:
                self.root.set_data(DATA_X, X)
                self.root.set_data(DATA_Y, y)
                point = self._point(z)
                value = float(logp(point))
                if not np.isfinite(value):
                    return penalty(z)
                return -value, -np.asarray(dlogp(point), dtype=float)

        return objective

    def sample_prior(self, S: int, rng: np.random.Generator) -> KernelDraws:
        """``S`` draws of the free variables from their priors."""
        import pymc as pm

        values = pm.draw(self.rvs, draws=S, random_seed=int_seed(rng))
        return self.completed(dict(zip(self.names, values, strict=True)))


class PyMCGP(ComponentGP):
    """``ComponentGP`` of a user's PyMC model (see the module docstring); made by
    :meth:`ComponentGP.from_pymc`."""

    draws_type = KernelDraws

    @staticmethod
    def takes(kernel, priors, noise, build, warp) -> bool:
        """Whether ``ComponentGP(..., build=)`` is a ``PyMCGP``: a model is given."""
        return build is not None and warp is None

    def __init__(
        self,
        kernel=None,
        input_dim=None,
        *,
        build,
        priors=None,
        noise=None,
        transform="standardize",
        bounds=None,
        standardize=True,
        name="f",
        max_draws=256,
    ):
        if not callable(build):
            raise TypeError(
                f"component {name!r}: from_pymc needs a callable build(X, y); got {build!r}"
            )
        self.build = build
        super().__init__(
            "se",
            input_dim,
            transform=transform,
            bounds=bounds,
            standardize=standardize,
            name=name,
            max_draws=max_draws,
        )
        self.template = {"build": build, "transform": transform}
        self.kernel = self.model_kernel = None

    def _setup_kernel(self, kernel, noise) -> None:
        self.kernel, self.noise, self._prior_fields = None, None, None

    @property
    def mean_var(self) -> float:
        return 0.0  # the user's model says what the mean is

    @property
    def model(self) -> PyMCModel:
        """The built model (built on first use, once per structure)."""
        if self.input_dim is None:
            raise RuntimeError(f"component {self.name!r}: the input dimension is not known yet")
        # the function itself, not its id: the cache holds it, so a later build (a
        # notebook's redefinition) cannot take a dead one's id and its stale model
        key = ("pymc", self.build, self.input_dim, self.name)
        return compiled(key, lambda: PyMCModel(self.build, self.input_dim, self.name))

    def _compiled(self) -> PyMCModel:
        return self.model

    @property
    def posterior_kernel(self) -> PyMCModel:
        return self.model

    def hyper_names(self) -> list[str]:
        return list(self.model.names)

    def _completed(self, draws: KernelDraws) -> KernelDraws:
        return self.model.completed(draws.values)

    def _posterior_draws(self, posterior) -> KernelDraws:
        # the noise sd is the model's noise term, whatever the user named its variables
        return self.model.completed(stacked(posterior, self.model.names))

    def _check_draws(self, draws: KernelDraws) -> None:
        missing = [n for n in [*self.model.names, "sigma"] if n not in draws.values]
        if missing:
            raise ValueError(f"draws lack {missing} for component {self.name!r}'s PyMC model")

    def _make_posterior(self, Xs, ys, draws) -> GPPosterior:
        return GPPosterior(self.model, Xs, ys, draws, JITTER, 0.0)

    def _unconstrained(self, init: KernelDraws, cm: PyMCModel) -> np.ndarray:
        return cm.unconstrained(init)

    def numpy_density(self):
        """``(log_posterior, to_draws)`` of the sampler
        (:mod:`~pp_decomp.components.inference.refresh`)."""
        return self.model.log_posterior, self.model.to_draws

    def sample_prior(self, S: int, rng: np.random.Generator) -> KernelDraws:
        return self.model.sample_prior(S, rng)

    def log_prior_variance(self, name: str) -> float:
        draws = self.model.sample_prior(4000, np.random.default_rng(0))
        return float(np.var(np.log(draws.values[name])))

    def _map_problem(self, Xs, ys, restarts, rng, init):
        cm = self.model
        X, y = np.asarray(Xs, dtype=float), np.asarray(ys, dtype=float)
        if init is not None:
            starts = [cm.unconstrained(init).mean(0)]
        else:
            point = cm.root.initial_point()
            starts = [np.concatenate([np.ravel(point[n]) for n in cm.value_names])]
        prior = cm.sample_prior(max(restarts - 1, 0), rng) if restarts > 1 else None
        if prior is not None:
            starts += list(cm.unconstrained(prior))
        return cm.map_objective(X, y), starts, cm.search_box(), cm.to_draws

    def _sample(self, Xs, ys, s, seed: int, starts=None):
        import nutpie

        cm = self.model
        with cm._lock:
            compiled_model = cm.nutpie_model.with_data(
                **{DATA_X: np.asarray(Xs, float), DATA_Y: np.asarray(ys, float)}
            )
        init_mean = None if starts is None else np.asarray(starts, float).mean(0)
        return nutpie.sample(compiled_model, init_mean=init_mean, **sample_kwargs(s, seed))

    def model_dict(self) -> dict:
        """The component's model as plain data: the build function's name and the
        PyMC model's own description."""
        return {
            "pymc": build_name(self.build),
            "model": self.model.root.str_repr() if self.input_dim is not None else None,
            "transform": self.transform,
        }

    def __repr__(self) -> str:
        fitted = "unfitted" if self._posterior is None else f"S={self.draws.n_draws}"
        return f"ComponentGP.from_pymc({self.name!r}, {self.model_dict()['pymc']}, {fitted})"
