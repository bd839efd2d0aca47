"""BoTorch's loops as strategies: the composite model list and the single-GP baseline.

Each step refits BoTorch's defaults from scratch, as BoTorch's tutorials do:
``SingleTaskGP`` (inputs normalised to the unit box by the domain's bounds,
outputs standardised, its LogNormal priors) by ``fit_gpytorch_mll``, then

* ``botorch-composite``: a ``ModelListGP`` of one GP per observed component and
  Monte Carlo ``qUpperConfidenceBound`` (``q = 1``, the step's ``β_t``) of the
  signed composition ``h = sign · g(f_1, ..., f_J)`` with quasi-MC base samples;
* ``botorch-gp-ucb``: one GP on the signed composed observations and the
  analytic ``UpperConfidenceBound`` (``μ + sqrt(β_t) σ``).

The acquisition is maximised exhaustively on a candidate set, by BoTorch's
``optimize_acqf`` on a box (linear constraints passed as its inequality
constraints), so the peer is BoTorch's own loop on our instances, designs and
``β_t``. A nonlinear ``g`` is a numpy function: its MC UCB is computed from
BoTorch's posterior samples in numpy and maximised with pp_decomp's maximiser.
"""

from __future__ import annotations

import warnings

import numpy as np

from pp_decomp.optim import is_excluded, maximize, project_feasible
from pp_decomp.space import CandidateSet
from pp_decomp.validate import int_seed

MC_SAMPLES = 512  # quasi-MC base samples of the composite qUCB
RAW_SAMPLES, RESTARTS = 512, 8  # optimize_acqf on a box


def _torch():
    import torch

    torch.set_num_threads(1)
    return torch


def _fit(tX, tY, bounds):
    """One ``SingleTaskGP`` per column of ``tY`` (a ``ModelListGP`` if several), fitted."""
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.models.transforms.input import Normalize
    from gpytorch.mlls import ExactMarginalLogLikelihood, SumMarginalLogLikelihood

    d = tX.shape[-1]
    gps = [
        SingleTaskGP(tX, tY[:, j : j + 1], input_transform=Normalize(d, bounds=bounds))
        for j in range(tY.shape[1])
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BoTorch's input-scaling and fitting chatter
        if len(gps) == 1:
            model = gps[0]
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        else:
            model = ModelListGP(*gps)
            fit_gpytorch_mll(SumMarginalLogLikelihood(model.likelihood, model))
    return model


def _maximize_torch(acq, ctx, torch):
    """Exhaustive on candidates (failed ones masked), ``optimize_acqf`` on a box."""
    dom = ctx.problem.domain
    if isinstance(dom, CandidateSet):
        Xc = torch.tensor(dom.X)
        with torch.no_grad():
            vals = torch.cat([acq(Xc[i : i + 2048, None, :]) for i in range(0, len(Xc), 2048)])
        vals = vals.numpy().astype(float)
        vals[is_excluded(dom.X, ctx.excluded, dom.widths)] = -np.inf
        i = int(np.argmax(vals))
        return dom.X[i].copy(), float(vals[i])
    from botorch.optim import optimize_acqf

    cons = None
    if dom.A is not None:  # A x <= b  as  (-A) x >= -b
        idx = torch.arange(dom.dim)
        cons = [(idx, torch.as_tensor(-a), float(-b)) for a, b in zip(dom.A, dom.b, strict=True)]
    bounds = torch.as_tensor(dom.bounds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, v = optimize_acqf(
            acq,
            bounds,
            q=1,
            num_restarts=RESTARTS,
            raw_samples=RAW_SAMPLES,
            inequality_constraints=cons,
        )
    return project_feasible(dom, x.detach().numpy()[0]), float(v)


def composite_ucb(ctx):
    """``botorch-composite``: the next input and its acquisition value."""
    torch = _torch()
    from botorch.acquisition import qUpperConfidenceBound
    from botorch.acquisition.objective import GenericMCObjective
    from botorch.sampling import SobolQMCNormalSampler

    torch.manual_seed(int_seed(ctx.rng))
    p = ctx.problem
    tX, tY = torch.as_tensor(ctx.X), torch.as_tensor(ctx.Y)
    model = _fit(tX, tY, torch.as_tensor(p.domain.bounds))
    sampler = SobolQMCNormalSampler(torch.Size([MC_SAMPLES]), seed=int_seed(ctx.rng))
    lin = p.linear
    if lin is not None and lin.constant_weights is not None and lin.offset is None:
        w = torch.as_tensor(p.sign * lin.constant_weights)
        objective = GenericMCObjective(lambda Z, X=None: (Z * w).sum(-1))
        acq = qUpperConfidenceBound(model, beta=ctx.beta, sampler=sampler, objective=objective)
        return _maximize_torch(acq, ctx, torch)
    return _numpy_composite(model, sampler, ctx, torch)


def _numpy_composite(model, sampler, ctx, torch):
    """qUCB of a numpy ``g``: ``mean(h) + sqrt(β π / 2) mean|h - mean(h)|`` over samples."""
    scale = np.sqrt(ctx.beta * np.pi / 2)

    def acq(X):
        X = np.asarray(X, dtype=float)
        with torch.no_grad():
            post = model.posterior(torch.as_tensor(X)[:, None, :])
            Z = sampler(post).numpy()[:, :, 0, :]  # (n_mc, m, J)
        h = ctx.problem.sign * ctx.problem.compose(Z, X)
        mean = h.mean(0)
        return mean + scale * np.abs(h - mean).mean(0)

    return maximize(acq, ctx.problem.domain, seed=ctx.rng, method=ctx.method, exclude=ctx.excluded)


def gp_ucb(ctx):
    """``botorch-gp-ucb``: the next input and its acquisition value."""
    torch = _torch()
    from botorch.acquisition import UpperConfidenceBound

    torch.manual_seed(int_seed(ctx.rng))
    p = ctx.problem
    h = p.sign * p.compose(ctx.Y, ctx.X)
    model = _fit(
        torch.as_tensor(ctx.X), torch.as_tensor(h[:, None]), torch.as_tensor(p.domain.bounds)
    )
    return _maximize_torch(UpperConfidenceBound(model, beta=ctx.beta), ctx, torch)
