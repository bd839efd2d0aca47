"""BOFN's EI-FN written on BoTorch: the function-network peer (Astudillo & Frazier 2021,
code ``RaulAstudillo06/BOFN``, ``GaussianProcessNetwork``).

Each step refits, as BOFN does, one BoTorch ``SingleTaskGP`` per node with BOFN's
fixed noise variance ``1e-6`` and a ``Standardize`` outcome transform (point
estimates of BoTorch's default kernel and priors by ``fit_gpytorch_mll``), on the
node's inputs (normalised by the domain) and its parents' observed outputs
(min-max normalised by their training range, BOFN's
``normalization_constant_lower/upper``). The acquisition is BOFN's: the Monte
Carlo expected improvement over the best observed objective of ``128`` Sobol
normal paths through the network, each node sampled at its parents' sampled
values. It is a numpy function of ``x`` here, maximised by pp_decomp's
maximiser, as the composite peer's numpy ``g`` is (:mod:`pp_decomp.peers.botorch`):
the two loops differ in their models, not their search.
"""

from __future__ import annotations

import warnings

import numpy as np

from pp_decomp.network import problem_network
from pp_decomp.optim import maximize
from pp_decomp.validate import int_seed

EIFN_SAMPLES = 128  # BOFN's SobolQMCNormalSampler(num_samples=128)
EIFN_NOISE = 1e-6  # BOFN's fixed node noise variance (2021 code)


def _unit_inputs(node, X, lower, width) -> np.ndarray:
    """The inputs ``node`` reads, ``X[..., inputs]``, on the unit box of the domain."""
    cols = list(node.inputs)
    return (X[..., cols] - lower[cols]) / width[cols]


def _node_data(net, k: int, X, Y, lower, width):
    """Node ``k``'s normalised training inputs and its parents' range ``(lo, span)``."""
    cols = _unit_inputs(net.nodes[k], X, lower, width)
    par = Y[:, list(net.parents[k])]
    lo, span = par.min(0), np.maximum(par.max(0) - par.min(0), 1e-12)
    return np.concatenate([cols, (par - lo) / span], axis=1), lo, span


def _fit_nodes(net, X, Y, lower, width, torch):
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from gpytorch.mlls import ExactMarginalLogLikelihood

    gps, scales = [], []
    for k in range(len(net)):
        Z, lo, span = _node_data(net, k, X, Y, lower, width)
        y = torch.as_tensor(Y[:, k : k + 1])
        gp = SingleTaskGP(
            torch.as_tensor(Z), y, torch.full_like(y, EIFN_NOISE), outcome_transform=Standardize(1)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BoTorch's input-scaling and fitting chatter
            fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        gps.append(gp)
        scales.append((lo, span))
    return gps, scales


def _paths(net, gps, scales, X, z, lower, width, torch) -> np.ndarray:
    """The nodes' values on the paths ``z (N, K)`` at ``X (m, d)``: (N, m, K)."""
    N, m = len(z), len(X)
    F = np.empty((N, m, len(net)))
    for k in net.order:
        cols = _unit_inputs(net.nodes[k], X, lower, width)
        lo, span = scales[k]
        par = (F[:, :, list(net.parents[k])] - lo) / span
        Z = np.concatenate([np.broadcast_to(cols, (N, m, cols.shape[1])), par], axis=-1)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gpytorch's note on BOFN's tiny fixed noise
            post = gps[k].posterior(torch.as_tensor(Z.reshape(-1, 1, Z.shape[-1])))
            mean = post.mean.numpy().reshape(N, m)
            sd = post.variance.clamp_min(0).sqrt().numpy().reshape(N, m)
        F[:, :, k] = mean + sd * z[:, k, None]
    return F


def network_ei(ctx):
    """``botorch-ei-fn``: the next input and its acquisition value (module docstring)."""
    import torch
    from botorch.utils.sampling import draw_sobol_normal_samples

    torch.set_num_threads(1)
    torch.manual_seed(int_seed(ctx.rng))
    p = ctx.problem
    net = problem_network(p)
    lower, width = p.domain.lower, p.domain.upper - p.domain.lower
    gps, scales = _fit_nodes(net, ctx.X, ctx.Y, lower, width, torch)
    z = draw_sobol_normal_samples(len(net), EIFN_SAMPLES, seed=int_seed(ctx.rng)).numpy()

    def samples(X):
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return p.sign * net.objective(_paths(net, gps, scales, X, z, lower, width, torch))

    def acq(X):
        return np.maximum(samples(X) - ctx.best, 0.0).mean(0)

    acq.tie_break = lambda X: samples(X).mean(0)
    return maximize(acq, p.domain, seed=ctx.rng, method=ctx.method, exclude=ctx.excluded)
