"""Named strategies: which surrogate each uses and how it picks the next input."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pp_decomp import acquisition as acq
from pp_decomp.optim import maximize
from pp_decomp.space import Box, CandidateSet

THOMPSON_MAX_POINTS = 2000  # joint sampling is O(N³): larger sets are subsampled


@dataclass
class Context:
    """Everything a strategy may use at one step (built by the loop)."""

    problem: object
    t: int
    beta: float
    rng: np.random.Generator
    decomposed: acq.DecomposedSurrogate | None
    composed: acq.ComposedSurrogate | None
    best: float  # incumbent of the signed objective h = sign·f among observations
    gamma: float  # GP-MI state
    mc_samples: int
    method: str
    additive: object = None  # a fitted AdditiveGP for the additive strategies
    levels: int = 25  # grid levels per variable for message passing


@dataclass(frozen=True)
class Strategy:
    """A named rule: ``surrogate`` is "decomposed", "composed", "additive" or "none"."""

    name: str
    surrogate: str
    description: str
    build: Callable[[Context], Callable] | None = None
    choose_fn: Callable[[Context], tuple[np.ndarray, float]] | None = None

    def choose(self, ctx: Context) -> tuple[np.ndarray, float]:
        """The next input and its acquisition value."""
        if self.choose_fn is not None:
            return self.choose_fn(ctx)
        return maximize(self.build(ctx), ctx.problem.domain, seed=ctx.rng, method=ctx.method)


def _lipschitz_range(ctx: Context) -> np.ndarray:
    dom = ctx.problem.domain
    if isinstance(dom, CandidateSet):
        idx = ctx.rng.choice(dom.size, size=min(dom.size, 1024), replace=False)
        return dom.X[idx]
    return dom.sample(1024, seed=ctx.rng)


def _thompson_points(ctx: Context) -> np.ndarray:
    dom = ctx.problem.domain
    if isinstance(dom, CandidateSet):
        if dom.size <= THOMPSON_MAX_POINTS:
            return dom.X
        return dom.X[ctx.rng.choice(dom.size, THOMPSON_MAX_POINTS, replace=False)]
    return dom.sample(1024, seed=ctx.rng)


def _thompson(ctx: Context):
    X = _thompson_points(ctx)
    if ctx.decomposed is not None:
        h = ctx.decomposed.h(ctx.decomposed.joint_sample(X, ctx.rng), X)
    else:
        h = ctx.composed.joint_sample(X, ctx.rng)
    i = int(np.argmax(h))
    return X[i].copy(), float(h[i])


def _random(ctx: Context):
    return ctx.problem.domain.sample(1, seed=ctx.rng)[0], float("nan")


def _add_gp_ucb(ctx: Context):
    from pp_decomp.additive import add_gp_ucb_maximize

    return add_gp_ucb_maximize(ctx.additive, ctx.beta, ctx.problem.domain, ctx.rng, ctx.method)


def _g_add_gp_ucb(ctx: Context):
    from pp_decomp.additive import g_add_gp_ucb_maximize

    return g_add_gp_ucb_maximize(ctx.additive, ctx.beta, ctx.problem.domain, ctx.levels)


def _gpmi(ctx: Context):
    return acq.GPMI(ctx.composed, ctx.gamma)


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in [
        Strategy(
            "d-gpucb",
            "decomposed",
            "D-GPUCB, linear g (Wang Alg. 3)",
            build=lambda c: acq.DGPUCB(c.decomposed, c.beta),
        ),
        Strategy(
            "d-gpucb-lipschitz",
            "decomposed",
            "generalized D-GPUCB, Lipschitz bound (Wang Alg. 4)",
            build=lambda c: acq.LipschitzUCB(
                c.decomposed, c.beta, c.problem.lipschitz, _lipschitz_range(c)
            ),
        ),
        Strategy(
            "d-gpucb-mc",
            "decomposed",
            "generalized D-GPUCB, Monte Carlo quantile of g over posterior draws",
            build=lambda c: acq.MonteCarloUCB(c.decomposed, c.beta, c.mc_samples, c.rng),
        ),
        Strategy(
            "d-ei",
            "decomposed",
            "expected improvement on the decomposed posterior",
            build=lambda c: acq.ExpectedImprovement(c.decomposed, c.best, 0.0, c.mc_samples, c.rng),
        ),
        Strategy(
            "d-pi",
            "decomposed",
            "probability of improvement on the decomposed posterior",
            build=lambda c: acq.ProbabilityOfImprovement(
                c.decomposed, c.best, 0.01, c.mc_samples, c.rng
            ),
        ),
        Strategy(
            "d-thompson",
            "decomposed",
            "Thompson sampling of the components through g",
            choose_fn=_thompson,
        ),
        Strategy(
            "gp-ucb",
            "composed",
            "GP-UCB on the composed output (Srinivas et al.)",
            build=lambda c: acq.UCB(c.composed, c.beta),
        ),
        Strategy(
            "ei",
            "composed",
            "expected improvement on the composed output",
            build=lambda c: acq.ExpectedImprovement(c.composed, c.best),
        ),
        Strategy(
            "pi",
            "composed",
            "probability of improvement (MPI) on the composed output",
            build=lambda c: acq.ProbabilityOfImprovement(c.composed, c.best, 0.01),
        ),
        Strategy(
            "gp-mi", "composed", "GP-MI on the composed output (Contal et al. Alg. 1)", build=_gpmi
        ),
        Strategy(
            "thompson", "composed", "Thompson sampling on the composed output", choose_fn=_thompson
        ),
        Strategy(
            "add-gp-ucb",
            "additive",
            "Add-GP-UCB, decomposition learnt by partial marginal likelihood (Kandasamy Alg. 2)",
            choose_fn=_add_gp_ucb,
        ),
        Strategy(
            "add-gp-ucb-oracle",
            "additive",
            "Add-GP-UCB with the problem's known groups (Kandasamy's Add-*)",
            choose_fn=_add_gp_ucb,
        ),
        Strategy(
            "g-add-gp-ucb",
            "additive",
            "G-Add-GP-UCB, overlapping groups learnt by Gibbs sampling (Rolland Alg. 1-3)",
            choose_fn=_g_add_gp_ucb,
        ),
        Strategy(
            "g-add-gp-ucb-disjoint",
            "additive",
            "G-Add-GP-UCB restricted to disjoint groups (Rolland's No Overlap)",
            choose_fn=_g_add_gp_ucb,
        ),
        Strategy(
            "g-add-gp-ucb-oracle",
            "additive",
            "G-Add-GP-UCB with the problem's known dependency graph (Rolland's Oracle)",
            choose_fn=_g_add_gp_ucb,
        ),
        Strategy("random", "none", "uniformly random feasible inputs", choose_fn=_random),
    ]
}


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name`` or a ValueError listing the choices."""
    if name not in STRATEGIES:
        raise ValueError(f"strategy must be one of {sorted(STRATEGIES)}; got {name!r}")
    return STRATEGIES[name]


# strategies whose acquisition improves on the best observation so far
NEED_INCUMBENT = ("ei", "pi", "d-ei", "d-pi")

# where the oracle strategies read the problem's known structure
ORACLE_STRUCTURE = {"add-gp-ucb-oracle": "groups", "g-add-gp-ucb-oracle": "edges"}


def additive_unsupported(name: str, problem) -> str | None:
    """Why the additive strategy ``name`` cannot run on ``problem``, or ``None`` if it can.

    The additive strategies maximise group by group, which needs a box without
    linear constraints coupling the groups; the oracle ones also need the
    problem's known structure in ``problem.metadata``. The loop raises with this
    reason and the benchmark skips the task with it.
    """
    dom = problem.domain
    if not isinstance(dom, Box) or dom.A is not None:
        return "it maximises group by group, so it needs a Box domain without linear constraints"
    key = ORACLE_STRUCTURE.get(name)
    if key is not None and key not in problem.metadata:
        return f"it needs the problem's known structure in problem.metadata[{key!r}]"
    return None


def fixed_unsupported(name: str, problem, known_kernels=None) -> str | None:
    """Why strategy ``name`` cannot run with known kernels on ``problem``, or ``None``.

    ``inference="fixed"`` conditions the GPs on ``known_kernels`` (default
    ``problem.known_kernels``). The composed baselines need a known kernel of
    the composed output, or a linear decomposition (then the entire GP's kernel
    ``Σ g_j k_j g_j`` follows from the components'); the additive strategies
    learn their own structure, which known component kernels do not fix.
    """
    known = problem.known_kernels if known_kernels is None else known_kernels
    if known is None:
        return "the problem has no known_kernels"
    surrogate = get_strategy(name).surrogate
    if surrogate == "additive":
        return "the additive strategies learn their own kernel structure"
    if surrogate == "composed" and problem.linear is None and known.composed is None:
        return (
            "g is not linear, so its composed GP needs a known kernel of its own "
            "(KnownKernels(composed=...))"
        )
    return None
