"""The posterior of a function network: one GP per node, sampled through the graph.

Node ``k``'s GP regresses ``y_k`` on ``Z_k = (x[I_k], y_{P_k})``. A sample path
``n`` of the network at ``x`` takes, for every node in topological order, a
hyperparameter draw ``s_{n,k}`` of that node's GP and a standard normal
``z_{n,k}``, and sets

    F_{n,k}(x) = μ_{s,k}(Z_{n,k}) + σ_{s,k}(Z_{n,k}) z_{n,k},
    Z_{n,k} = (x[I_k], F_{n,P_k}(x)),

so a child sees its parents' sampled values (Astudillo & Frazier 2021, Alg. 1,
over the hyperparameter posterior of every node). Independent node GPs miss
that nodes err together (on the flu network the five age groups' sick days
rise and fall with one epidemic, so the hospital load that sums them is more
uncertain than their independent parts say); with ``corr`` the normals are
coupled across nodes, ``z_n = L_C u_n``, by the copula of the decomposed
strategies (:mod:`pp_decomp.composition.core`) fitted to the nodes' whitened
residuals (:func:`node_correlation`): each node keeps its marginal. A node on the log
scale (``logged``: its GP regresses ``log y_k``, for a positive output spanning
orders of magnitude) takes ``F_{n,k} = exp(μ + σ z)``, log-normal per draw, and its
children read that value in the system's units. The objective's samples are
``h_n(x) = sign · objective(F_n(x))``. With the base samples ``(z, s)`` fixed,
``h_n`` is a smooth function of ``x``: what the acquisitions maximise.

Example
-------
>>> import numpy as np
>>> import pp_decomp as ppd
>>> from pp_decomp.network import NetworkSurrogate
>>> from pp_decomp.models import get_problem
>>> p = get_problem("alpine2-network")
>>> net = p.metadata["network"]
>>> X = p.domain.sample(12, seed=0); Y = p.evaluate(X)
>>> gps = [ppd.ComponentGP(bounds=node_bounds(net, k, p.domain, Y))
...        .fit(net.node_inputs(k, X, Y), Y[:, k], "map", seed=0) for k in range(len(net))]
>>> s = NetworkSurrogate(net, gps, p.sign)
>>> z, idx = s.base_samples(64, np.random.default_rng(0))
>>> s.objective_samples(X[:3], z, idx).shape
(64, 3)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc

from pp_decomp.components.gp.base import believing
from pp_decomp.composition.core import correlation_of_residuals, whitened_residuals
from pp_decomp.network.graph import Network
from pp_decomp.network.problem import problem_network
from pp_decomp.problem import logged

PARENT_MARGIN = 0.1  # fraction of a parent's observed range added on each side of its bounds


def node_bounds(network: Network, k: int, domain, Y: np.ndarray) -> np.ndarray:
    """Bounds ``(2, p)`` of node ``k``'s GP inputs: the domain's for the inputs it reads,
    its parents' observed range ``Y[:, parents]`` (NaN skipped) widened by
    ``PARENT_MARGIN`` each side for their outputs (BOFN scales parents by their
    observed range)."""
    b = np.asarray(domain.bounds, dtype=float)[:, list(network.nodes[k].inputs)]
    par = np.asarray(Y, dtype=float)[:, list(network.parents[k])]
    lo, hi = np.nanmin(par, axis=0), np.nanmax(par, axis=0)  # NaN: a row evaluated in part
    pad = np.maximum(hi - lo, 1e-9 * np.maximum(1.0, np.abs(hi))) * PARENT_MARGIN
    return np.concatenate([b, np.stack([lo - pad, hi + pad])], axis=1)


def _draws_for(S: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draw indices of ``S``: distinct at random where ``S >= n``, else each draw
    ``n // S`` or one more times, the extra ones at random, in random order."""
    if S >= n:
        return rng.choice(S, size=n, replace=False)
    extra = rng.choice(S, size=n % S, replace=False)
    return rng.permutation(np.concatenate([np.repeat(np.arange(S), n // S), extra]))


def node_correlation(gps: Sequence, shared: int | None = None) -> np.ndarray | None:
    """The copula's ``C (K, K)`` across the nodes: the decomposed strategies' estimate
    (:func:`~pp_decomp.composition.core.correlation_of_residuals`) from each node's
    whitened residuals on its own ``Z_k``, row ``i`` of every node the same evaluation.

    ``shared``: how many leading rows of every node's data are the same evaluations
    (a run's evaluations told whole; a node evaluated alone also learns from open
    rows, which come after them). The residuals are one-step-ahead errors in the
    data's order, so the first ``shared`` of them are the errors on those rows
    alone. By default the nodes' whole data, which must then be of one length.
    ``None`` (independent nodes) where fewer than 2 rows are shared, the nodes'
    data differ in length without ``shared``, or a node's GP has no residuals.

    >>> import pp_decomp as ppd
    >>> from pp_decomp.models import get_problem
    >>> p = get_problem("ackley-network")
    >>> net = p.metadata["network"]
    >>> X = p.domain.sample(16, seed=0); Y = p.evaluate(X)
    >>> gps = [ppd.ComponentGP(bounds=node_bounds(net, k, p.domain, Y))
    ...        .fit(net.node_inputs(k, X, Y), Y[:, k], "map", seed=0) for k in range(len(net))]
    >>> C = node_correlation(gps)
    >>> C.shape, bool(np.allclose(np.diag(C), 1.0))
    ((3, 3), True)
    """
    try:
        E = [whitened_residuals(gp)[0] for gp in gps]
    except TypeError:  # a node without its own data's posterior (a known function)
        return None
    if shared is None:
        if len({len(e) for e in E}) != 1:
            return None
        shared = len(E[0])
    if shared < 2 or any(len(e) < shared for e in E):
        return None
    return correlation_of_residuals(np.stack([e[:shared] for e in E], axis=1))


def _checked_corr(corr, K: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``corr`` as a ``(K, K)`` correlation matrix and its Cholesky factor (``None``
    twice for independent nodes); a ValueError naming ``corr`` otherwise."""
    if corr is None:
        return None, None
    corr = np.asarray(corr, dtype=float)
    if corr.shape != (K, K) or not np.allclose(np.diag(corr), 1.0):
        raise ValueError(f"corr must be a ({K}, {K}) correlation matrix; got shape {corr.shape}")
    return corr, np.linalg.cholesky(corr)


class NetworkSurrogate:
    """The network's posterior from its node GPs (module docstring).

    Parameters
    ----------
    network : Network
    gps : one fitted GP per node, in ``network.nodes`` order, each on its ``Z_k``
    sign : +1 to maximise the objective, -1 to minimise it
    corr : (K, K) correlation of the nodes' normals (the copula), default independent
    logged : (K,) booleans, the nodes whose GPs regress ``log y_k``; default none
    """

    def __init__(
        self,
        network: Network,
        gps: Sequence,
        sign: float = 1.0,
        corr: np.ndarray | None = None,
        logged: Sequence[bool] | None = None,
    ):
        K = len(network)
        if len(gps) != K:
            raise ValueError(f"gps has {len(gps)} model(s) for {K} node(s)")
        self.network, self.gps, self.sign = network, list(gps), float(sign)
        self.corr, self._chol = _checked_corr(corr, K)
        self.logged = np.zeros(K, bool) if logged is None else np.asarray(logged, dtype=bool)
        if self.logged.shape != (K,):
            raise ValueError(f"logged must name each of the {K} nodes; got {self.logged.shape}")

    @classmethod
    def of(
        cls,
        problem,
        models: Mapping,
        copula: bool = False,
        shared: int | None = None,
        transform="none",
    ) -> NetworkSurrogate:
        """The surrogate of a network ``problem`` from a run's GPs by node name; with
        ``copula``, the nodes' normals coupled by :func:`node_correlation` on the
        ``shared`` evaluations every node was fitted at first (a run's ``n``); the
        nodes the outcome ``transform`` puts on the log scale
        (:func:`~pp_decomp.problem.logged`) sampled as such."""
        gps = [models[name] for name in problem.component_names]
        corr = node_correlation(gps, shared) if copula else None
        if copula and corr is None:
            warnings.warn(
                f"copula=True on network {problem.name!r}: its nodes' GPs do not share 2 "
                "evaluations (nodes evaluated one at a time, or data of different lengths "
                "with no shared rows named), or one has no residuals of its own, so these "
                "paths take the nodes as independent",
                UserWarning,
                stacklevel=2,
            )
        on_log = logged(transform, len(gps))
        return cls(problem_network(problem), gps, problem.sign, corr, on_log)

    @property
    def n_draws(self) -> tuple[int, ...]:
        """Each node's number of hyperparameter draws."""
        return tuple(int(gp.n_draws) for gp in self.gps)

    def believed(self, P: np.ndarray) -> np.ndarray:
        """Every node's believed value at the inputs ``P (k, d)``, in the graph's order:
        its posterior mean over its draws at its inputs and its parents' believed
        values (the mean carried down the graph; for a node on the log scale, ``exp``
        of its GP's mean, the log-normal's median): (k, K)."""
        P = np.atleast_2d(np.asarray(P, dtype=float))
        F = np.empty((len(P), len(self.network)))
        for k in self.network.order:
            F[:, k] = self.gps[k].predict(self.network.node_inputs(k, P, F))[0]
            if self.logged[k]:  # the median of the node's log-normal
                F[:, k] = np.exp(F[:, k])
        return F

    def believed_objective(self, P: np.ndarray) -> np.ndarray:
        """The signed objective of the believed values at ``P (k, d)``: (k,)."""
        return self.sign * self.network.objective(self.believed(P)[None])[0]

    def believing(self, P: np.ndarray) -> NetworkSurrogate:
        """The network's posterior with the pending inputs ``P (k, d)`` hallucinated
        (GP-BUCB, Desautels et al. 2014, through the graph): node ``k``'s GP has also
        observed its own mean at ``(P[:, I_k], believed parents)`` (:meth:`believed`),
        so its means are unchanged and its variance there is reduced; the surrogate
        itself where nothing is pending.

        >>> import numpy as np
        >>> import pp_decomp as ppd
        >>> from pp_decomp.models import get_problem
        >>> p = get_problem("alpine2-network")
        >>> net = p.metadata["network"]
        >>> X = p.domain.sample(12, seed=0); Y = p.evaluate(X)
        >>> gps = [ppd.ComponentGP(bounds=node_bounds(net, k, p.domain, Y))
        ...        .fit(net.node_inputs(k, X, Y), Y[:, k], "map", seed=0)
        ...        for k in range(len(net))]
        >>> s = NetworkSurrogate(net, gps, p.sign)
        >>> z, idx = s.base_samples(256, np.random.default_rng(0))
        >>> x = p.domain.sample(1, seed=1)
        >>> spread = lambda s: float(s.objective_samples(x, z, idx).std())
        >>> spread(s.believing(x)) < spread(s)
        True
        """
        P = np.atleast_2d(np.asarray(P, dtype=float))
        if not len(P):
            return self
        F = self.believed(P)
        gps = [believing(gp, self.network.node_inputs(k, P, F)) for k, gp in enumerate(self.gps)]
        return NetworkSurrogate(self.network, gps, self.sign, self.corr, self.logged)

    def base_samples(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` paths' normals ``z (n, K)`` (scrambled Sobol, as BoTorch's QMC sampler)
        and draw indices ``(n, K)``: per node, ``n`` of its ``S`` draws taken at random
        without replacement where ``S >= n``, else every draw in equal shares (within
        one); paired across nodes at random. Under the copula ``z = u L_Cᵀ``."""
        K = len(self.network)
        sobol = qmc.Sobol(K, scramble=True, seed=rng)
        u = sobol.random_base2(int(np.ceil(np.log2(max(n, 1)))))[:n]
        z = ndtri(np.clip(u, 1e-12, 1 - 1e-12))
        if self._chol is not None:
            z = z @ self._chol.T
        idx = np.stack([_draws_for(S, n, rng) for S in self.n_draws], axis=1)
        return z, idx

    def samples(
        self, X: np.ndarray, z: np.ndarray, idx: np.ndarray, fixed: np.ndarray | None = None
    ) -> np.ndarray:
        """Every node's sampled value at ``X (m, d)`` on the paths ``(z, idx)``: (n, m, K);
        ``fixed (m, K)``: values known at ``X`` (NaN elsewhere), held on every path, so
        their children are sampled at them (a row evaluated in part)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        net, n, m = self.network, len(z), len(X)
        F = np.empty((n, m, len(net)))
        known = self._known(fixed, m)
        for k in net.order:
            if not known[:, k].all():
                F[:, :, k] = self._node(k, X, F, z, idx)
            if known[:, k].any():  # held before the children read it
                F[:, known[:, k], k] = fixed[known[:, k], k]
        return F

    def _known(self, fixed, m: int) -> np.ndarray:
        """Where ``fixed (m, K)`` holds a value: (m, K) booleans, none for ``None``."""
        K = len(self.network)
        if fixed is None:
            return np.zeros((m, K), dtype=bool)
        if np.shape(fixed) != (m, K):
            raise ValueError(f"fixed must be (m, K) = {(m, K)}; got {np.shape(fixed)}")
        return np.isfinite(fixed)

    def _node(self, k: int, X, F, z, idx) -> np.ndarray:
        """Node ``k``'s values on the paths at ``X``, its parents' in ``F``: (n, m)."""
        net, gp = self.network, self.gps[k]
        if not net.parents[k]:
            mean, var = gp.predict_per_draw(X[:, list(net.nodes[k].inputs)])
            value = mean[idx[:, k]] + np.sqrt(var[idx[:, k]]) * z[:, k, None]
        else:
            Z = net.node_inputs(k, X[None], F)  # (n, m, p): every path its own parents
            Zs = gp.scale_X(Z.reshape(-1, Z.shape[-1])).reshape(Z.shape)
            mean, var = gp.posterior.paired_of(Zs, idx[:, k])
            value = gp.y_mean + gp.y_std * (mean + np.sqrt(var) * z[:, k, None])
        return np.exp(value) if self.logged[k] else value

    def samples_and_grad(
        self, X: np.ndarray, z: np.ndarray, idx: np.ndarray, fixed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`samples` and their gradients in ``X`` by the chain rule down the graph
        (a child's through its inputs and its parents' values): (n, m, K), (n, m, K, d);
        ``NotImplementedError`` where a node's GP has no input gradient."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        net, n, m = self.network, len(z), len(X)
        F, dF = np.empty((n, m, len(net))), np.zeros((n, m, len(net), X.shape[1]))
        known = self._known(fixed, m)
        for k in net.order:
            if not known[:, k].all():
                F[:, :, k], dF[:, :, k] = self._node_grad(k, X, F, dF, z, idx)
            if known[:, k].any():
                F[:, known[:, k], k] = fixed[known[:, k], k]
                dF[:, known[:, k], k] = 0.0
        return F, dF

    def _node_grad(self, k: int, X, F, dF, z, idx) -> tuple[np.ndarray, np.ndarray]:
        """Node ``k``'s values on the paths and their gradients in ``X``: (n, m), (n, m, d)."""
        net, gp = self.network, self.gps[k]
        cols, zk = list(net.nodes[k].inputs), z[:, k, None]
        if not net.parents[k]:
            mean, var, dmean, dvar = gp.predict_per_draw_grad(X[:, cols])
            i = idx[:, k]
            mean, var, dmean, dvar = mean[i], var[i], dmean[i], dvar[i]
            value, slope, scale = mean + np.sqrt(var) * zk, 1.0, 1.0
        else:
            Z = net.node_inputs(k, X[None], F)
            Zs = gp.scale_X(Z.reshape(-1, Z.shape[-1])).reshape(Z.shape)
            mean, var, dmean, dvar = gp.posterior.paired_grad(Zs, idx[:, k])
            value = gp.y_mean + gp.y_std * (mean + np.sqrt(var) * zk)
            slope, scale = 1.0 / (gp.bounds[1] - gp.bounds[0]), gp.y_std
        sd = np.sqrt(var)
        half = np.divide(zk, 2 * sd, out=np.zeros_like(sd), where=sd > 0)
        dZ = scale * (dmean + half[..., None] * dvar) * slope  # (n, m, p)
        out = np.zeros((*value.shape, X.shape[1]))
        out[..., cols] += dZ[..., : len(cols)]
        for c, p in enumerate(net.parents[k]):
            out += dZ[..., len(cols) + c, None] * dF[:, :, p]
        if self.logged[k]:  # d exp(v) = exp(v) dv
            value = np.exp(value)
            out *= value[..., None]
        return value, out

    def objective_samples_and_grad(
        self, X: np.ndarray, z: np.ndarray, idx: np.ndarray, fixed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`objective_samples` and their gradients in ``X``: (n, m), (n, m, d);
        ``NotImplementedError`` for an ``objective`` given without ``objective_grad``
        (:class:`~pp_decomp.network.Network`), where the maximiser takes finite
        differences."""
        net = self.network
        if not net.objective_differentiable:  # refused before the paths are sampled
            raise NotImplementedError("the network's objective was given without objective_grad")
        F, dF = self.samples_and_grad(X, z, idx, fixed)
        dh = np.einsum("nmk,nmkd->nmd", net.objective_grad(F), dF)
        return self.sign * net.objective(F), self.sign * dh

    def sample(self, X: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` fresh paths' node values at ``X (m, d)``: (n, m, K)."""
        return self.samples(X, *self.base_samples(n, rng))

    def objective_samples(
        self, X: np.ndarray, z: np.ndarray, idx: np.ndarray, fixed: np.ndarray | None = None
    ) -> np.ndarray:
        """``h = sign · objective(F)`` on the paths (``fixed`` as in :meth:`samples`): (n, m)."""
        return self.sign * self.network.objective(self.samples(X, z, idx, fixed))
