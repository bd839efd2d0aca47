"""The strategies: what a strategy is (a named rule, the surrogate it uses and what
it needs) and the catalog of them: which surrogate each uses, how it picks the
next input.

Every strategy declares its needs (:class:`Needs`) so that one function
(:func:`pp_decomp.strategies.unsupported`) decides, before any evaluation,
whether it can run on a problem with given settings; the optimiser, the
benchmark and the command line all ask that function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from pp_decomp import acquisition as acq
from pp_decomp.acquisition.self_correcting import SelfCorrectingUCB
from pp_decomp.acquisition.surrogate import ComposedSurrogate, DecomposedSurrogate, with_screen
from pp_decomp.additive import add_gp_ucb_maximize, g_add_gp_ucb_maximize
from pp_decomp.additive.gp import AdditiveGP
from pp_decomp.network import NetworkEI, NetworkSurrogate, NetworkUCB
from pp_decomp.optim import exclusion_radius, is_excluded, maximize
from pp_decomp.peers.botorch import composite_ucb, gp_ucb
from pp_decomp.peers.network import network_ei as botorch_network_ei
from pp_decomp.problem import Problem
from pp_decomp.space import Box, CandidateSet, domain_points

SURROGATES = ("decomposed", "composed", "additive", "network", "peer", "none")


@dataclass
class Context:
    """Everything a strategy may use at one step, built by the loop
    (:func:`pp_decomp.loop.ask.build_context`).

    ``problem``: the problem as the GPs see it; ``t``, ``beta``: the step and its
    ``β_t``; ``rng``: the step's acquisition stream. ``decomposed`` / ``composed``
    are the surrogates of the strategy's kind (both for a decomposed strategy
    ``with_composed``), ``additive`` a fitted additive GP, ``network`` a function
    network's node GPs (:class:`~pp_decomp.network.NetworkSurrogate`); ``best`` is the incumbent
    of the signed objective ``h = sign·f``, ``gamma`` GP-MI's state; ``excluded``
    ``(k, d)`` the inputs not to ask (failed, pending); ``X (n, d)``, ``Y (n, J)`` the
    observations (``Y`` under the outcome transform; peers fit their own models).
    """

    problem: Problem
    t: int
    beta: float
    rng: np.random.Generator
    excluded: np.ndarray
    X: np.ndarray
    Y: np.ndarray
    decomposed: DecomposedSurrogate | None = None
    composed: ComposedSurrogate | None = None
    additive: AdditiveGP | None = None
    network: NetworkSurrogate | None = None
    best: float = -np.inf
    gamma: float = 0.0
    mc_samples: int = 512
    method: str = "auto"
    levels: int = 25


@dataclass(frozen=True)
class Needs:
    """What a strategy needs of the problem and of the run.

    Parameters
    ----------
    linear_g : the composition must be linear (``problem.weights``)
    incumbent : it improves on the best observation, so ``n_init >= 1``
    box : it maximises group by group: a Box without linear constraints
    structure : key of the problem's known structure in ``problem.metadata``
    fast_path : it can run on the fast full-Bayes path (it uses component or
        composed GPs, which that path updates)
    known_kernels : it can run with ``inference="fixed"``
    peer : the optional package a peer strategy needs (``"botorch"``)
    batch : it can choose with other inputs pending (``ask(q > 1)``, asynchronous
        runs): the strategies whose surrogates hallucinate pending inputs
    joint : its acquisition uses the components' joint posterior (samples, or the
        linear composition's variance), which a copula changes; the Lipschitz
        bounds use each component's marginal only
    draws : it learns from the disagreement of hyperparameter draws, so it needs
        full Bayes (``inference="nuts"``)
    """

    linear_g: bool = False
    incumbent: bool = False
    box: bool = False
    structure: str | None = None
    fast_path: bool = True
    known_kernels: bool = True
    peer: str | None = None
    batch: bool = True
    joint: bool = True
    draws: bool = False


@dataclass(frozen=True)
class AdditiveSpec:
    """How an additive strategy learns its structure.

    ``method``: ``"kandasamy"`` (random disjoint decompositions scored by the
    marginal likelihood, hyperparameters by ``inference``) or ``"rolland"``
    (Gibbs sampling over a dependency graph); ``structure``: ``"learn"`` or
    ``"oracle"`` (the problem's known groups or edges); ``overlap``: whether
    Rolland's groups may overlap.
    """

    method: str
    structure: str = "learn"
    overlap: bool = True


@dataclass(frozen=True)
class Strategy:
    """A named rule for choosing the next input.

    ``build(ctx)`` returns an acquisition ``X (m, d) -> (m,)`` maximised over the
    domain; ``choose_fn(ctx)`` chooses directly (Thompson, random, additive).
    ``after_choice(ctx, x)``, if given, returns the strategy's state after
    choosing ``x`` (GP-MI's ``γ̂``). ``with_composed``: a decomposed strategy that
    also fits one GP of the composed output, given as ``ctx.composed``
    (:class:`~pp_decomp.acquisition.SmallerUCB`). ``bound``: a decomposed strategy
    whose acquisition is an upper confidence bound of ``h`` (default ``False``), the
    bound :func:`~pp_decomp.strategies.decomposed_bound` gives the step.

    Example
    -------
    >>> from pp_decomp.strategies import STRATEGIES
    >>> STRATEGIES["d-gpucb-mc"].bound, STRATEGIES["d-ei"].bound
    (True, False)
    """

    name: str
    surrogate: str
    description: str
    build: Callable | None = None
    choose_fn: Callable | None = None
    needs: Needs = field(default_factory=Needs)
    additive: AdditiveSpec | None = None
    after_choice: Callable | None = None
    with_composed: bool = False
    bound: bool = False

    def choose(self, ctx: Context) -> tuple[np.ndarray, float]:
        """The next input and its acquisition value."""
        if self.choose_fn is not None:
            return self.choose_fn(ctx)
        acq = self.build(ctx)
        if isinstance(ctx.problem.domain, Box):
            acq = with_screen(acq)
        return maximize(
            acq, ctx.problem.domain, seed=ctx.rng, method=ctx.method, exclude=ctx.excluded
        )

    def state_after(self, ctx: Context, x) -> float:
        """GP-MI's ``γ̂`` after choosing ``x`` (unchanged for the other strategies)."""
        return ctx.gamma if self.after_choice is None else self.after_choice(ctx, x)


THOMPSON_MAX_POINTS = 2000  # joint sampling is O(N³): larger sets are subsampled
LIPSCHITZ_RANGE_POINTS = 1024  # points of the domain over which B_j is bounded numerically
PI_MARGIN = 0.01  # ξ of PI (MPI), in the objective's units as in Contal et al.


def _spread(ctx: Context) -> float:
    """Standard deviation of the observed objective (the scale of improvements)."""
    h = ctx.problem.compose(ctx.Y, ctx.X)
    return float(np.std(h)) if len(h) > 1 else 1.0


NETWORK_PATHS = 128  # BOFN's EI-FN samples; each path costs a GP prediction per node


def network_paths(ctx: Context) -> int:
    """Paths through a network per step: the run's ``mc_samples``, at most
    :data:`NETWORK_PATHS` (a child node is predicted once per path and input)."""
    return min(ctx.mc_samples, NETWORK_PATHS)


def _thompson(ctx: Context):
    X = domain_points(ctx.problem.domain, THOMPSON_MAX_POINTS, ctx.rng)
    if ctx.decomposed is not None:
        h = ctx.decomposed.h(ctx.decomposed.joint_sample(X, ctx.rng), X)
    else:
        h = ctx.composed.joint_sample(X, ctx.rng)
    dom = ctx.problem.domain
    h = np.where(is_excluded(X, ctx.excluded, dom.widths, exclusion_radius(dom)), -np.inf, h)
    i = int(np.argmax(h))
    return X[i].copy(), float(h[i])


def _random(ctx: Context):
    dom = ctx.problem.domain
    if isinstance(dom, CandidateSet):
        free = ~is_excluded(dom.X, ctx.excluded, dom.widths)
        if free.any():
            # the draw of an unexcluded set, so excluding nothing keeps the choice
            return dom.sample(1, seed=ctx.rng, keep=free)[0], float("nan")
    return dom.sample(1, seed=ctx.rng)[0], float("nan")


def _add_gp_ucb(ctx: Context):
    return add_gp_ucb_maximize(ctx.additive, ctx.beta, ctx.problem.domain, ctx.rng, ctx.method)


def _g_add_gp_ucb(ctx: Context):
    return g_add_gp_ucb_maximize(ctx.additive, ctx.beta, ctx.problem.domain, ctx.levels)


def _botorch_composite(ctx: Context):
    return composite_ucb(ctx)


def _botorch_gp_ucb(ctx: Context):
    return gp_ucb(ctx)


def _gpmi_gamma(ctx: Context, x) -> float:
    return acq.GPMI(ctx.composed, ctx.gamma).updated_gamma(x)


def _capped(name: str, bound, joint: bool = False) -> Strategy:
    """``name-min``: the decomposed ``bound(ctx)`` capped by GP-UCB's on one GP of g
    (:class:`~pp_decomp.acquisition.SmallerUCB`); on the fast path the GP of g is
    updated as the components are. ``joint``: the bound uses the components' joint
    posterior."""
    return Strategy(
        f"{name}-min",
        "decomposed",
        f"the smaller of {name}'s bound and GP-UCB's on one GP of g",
        build=lambda c: acq.SmallerUCB(bound(c), c.composed, c.beta),
        needs=Needs(joint=joint),
        with_composed=True,
        bound=True,
    )


_NETWORK = Needs(structure="network", fast_path=False, known_kernels=False)
_PEER = Needs(fast_path=False, known_kernels=False, peer="botorch", batch=False)
_ADDITIVE = dict(
    surrogate="additive",
    needs=Needs(box=True, fast_path=False, known_kernels=False, batch=False),
)

STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in [
        Strategy(
            "d-gpucb",
            "decomposed",
            "D-GPUCB, linear g (Wang Alg. 3)",
            build=lambda c: acq.DGPUCB(c.decomposed, c.beta),
            needs=Needs(linear_g=True),
            bound=True,
        ),
        Strategy(
            "d-gpucb-sc",
            "decomposed",
            "self-correcting D-GPUCB: a bonus where the hyperparameter draws disagree "
            "(experimental)",
            build=lambda c: SelfCorrectingUCB(c.decomposed, c.beta),
            needs=Needs(linear_g=True, draws=True),
            bound=True,
        ),
        Strategy(
            "d-gpucb-lipschitz",
            "decomposed",
            "generalized D-GPUCB, Lipschitz bound (Wang Alg. 4)",
            build=lambda c: acq.LipschitzUCB(
                c.decomposed,
                c.beta,
                c.problem.lipschitz,
                c.problem.domain.sample(LIPSCHITZ_RANGE_POINTS, seed=c.rng),
            ),
            needs=Needs(joint=False),
            bound=True,
        ),
        Strategy(
            "d-gpucb-local",
            "decomposed",
            "generalized D-GPUCB, local Lipschitz bound over the credible box around μ(x)",
            build=lambda c: acq.LocalLipschitzUCB(c.decomposed, c.beta, c.rng),
            needs=Needs(joint=False),
            bound=True,
        ),
        Strategy(
            "d-gpucb-box",
            "decomposed",
            "generalized D-GPUCB, largest g over the credible box around μ(x)",
            build=lambda c: acq.CredibleBoxUCB(c.decomposed, c.beta, c.rng),
            needs=Needs(joint=False),
            bound=True,
        ),
        Strategy(
            "d-gpucb-mc",
            "decomposed",
            "generalized D-GPUCB, Monte Carlo quantile of g over posterior draws",
            build=lambda c: acq.MonteCarloUCB(c.decomposed, c.beta, c.mc_samples, c.rng),
            bound=True,
        ),
        _capped(
            "d-gpucb-mc",
            lambda c: acq.MonteCarloUCB(c.decomposed, c.beta, c.mc_samples, c.rng),
            joint=True,
        ),
        _capped("d-gpucb-local", lambda c: acq.LocalLipschitzUCB(c.decomposed, c.beta, c.rng)),
        _capped("d-gpucb-box", lambda c: acq.CredibleBoxUCB(c.decomposed, c.beta, c.rng)),
        Strategy(
            "d-ei",
            "decomposed",
            "expected improvement on the decomposed posterior",
            build=lambda c: acq.ExpectedImprovement(
                c.decomposed, c.best, 0.0, c.mc_samples, c.rng, _spread(c)
            ),
            needs=Needs(incumbent=True),
        ),
        Strategy(
            "d-pi",
            "decomposed",
            "probability of improvement on the decomposed posterior",
            build=lambda c: acq.ProbabilityOfImprovement(
                c.decomposed, c.best, PI_MARGIN, c.mc_samples, c.rng, _spread(c)
            ),
            needs=Needs(incumbent=True),
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
            needs=Needs(incumbent=True),
        ),
        Strategy(
            "pi",
            "composed",
            "probability of improvement (MPI) on the composed output",
            build=lambda c: acq.ProbabilityOfImprovement(c.composed, c.best, PI_MARGIN),
            needs=Needs(incumbent=True),
        ),
        Strategy(
            "gp-mi",
            "composed",
            "GP-MI on the composed output (Contal et al. Alg. 1)",
            build=lambda c: acq.GPMI(c.composed, c.gamma),
            after_choice=_gpmi_gamma,
        ),
        Strategy(
            "thompson",
            "composed",
            "Thompson sampling on the composed output",
            choose_fn=_thompson,
        ),
        Strategy(
            "add-gp-ucb",
            description="Add-GP-UCB, decomposition learnt by partial marginal likelihood "
            "(Kandasamy Alg. 2)",
            choose_fn=_add_gp_ucb,
            additive=AdditiveSpec("kandasamy"),
            **_ADDITIVE,
        ),
        Strategy(
            "add-gp-ucb-oracle",
            description="Add-GP-UCB with the problem's known groups (Kandasamy's Add-*)",
            choose_fn=_add_gp_ucb,
            additive=AdditiveSpec("kandasamy", structure="oracle"),
            surrogate="additive",
            needs=Needs(box=True, structure="groups", fast_path=False, known_kernels=False),
        ),
        Strategy(
            "g-add-gp-ucb",
            description="G-Add-GP-UCB, overlapping groups learnt by Gibbs sampling "
            "(Rolland Alg. 1-3)",
            choose_fn=_g_add_gp_ucb,
            additive=AdditiveSpec("rolland"),
            **_ADDITIVE,
        ),
        Strategy(
            "g-add-gp-ucb-disjoint",
            description="G-Add-GP-UCB restricted to disjoint groups (Rolland's No Overlap)",
            choose_fn=_g_add_gp_ucb,
            additive=AdditiveSpec("rolland", overlap=False),
            **_ADDITIVE,
        ),
        Strategy(
            "g-add-gp-ucb-oracle",
            description="G-Add-GP-UCB with the problem's known dependency graph (Rolland's Oracle)",
            choose_fn=_g_add_gp_ucb,
            additive=AdditiveSpec("rolland", structure="oracle"),
            surrogate="additive",
            needs=Needs(box=True, structure="edges", fast_path=False, known_kernels=False),
        ),
        Strategy(
            "botorch-composite",
            "peer",
            "BoTorch's composite loop: ModelListGP of SingleTaskGP, MC qUCB of g (peer)",
            choose_fn=_botorch_composite,
            needs=_PEER,
        ),
        Strategy(
            "botorch-gp-ucb",
            "peer",
            "BoTorch's SingleTaskGP on the composed output, analytic UCB (peer)",
            choose_fn=_botorch_gp_ucb,
            needs=_PEER,
        ),
        Strategy(
            "network-ei",
            "network",
            "EI-FN: expected improvement through the function network's node GPs "
            "(Astudillo & Frazier 2021)",
            build=lambda c: NetworkEI(c.network, c.best, network_paths(c), c.rng),
            needs=replace(_NETWORK, incumbent=True),
        ),
        Strategy(
            "network-ucb",
            "network",
            "UCB through the function network's node GPs (BoTorch's qUCB form)",
            build=lambda c: NetworkUCB(c.network, c.beta, network_paths(c), c.rng),
            needs=_NETWORK,
            bound=True,
        ),
        Strategy(
            "botorch-ei-fn",
            "peer",
            "BOFN's EI-FN on BoTorch: a SingleTaskGP per node, fixed noise, MC EI through "
            "the network with 128 QMC paths (peer)",
            choose_fn=botorch_network_ei,
            needs=replace(_PEER, structure="network", incumbent=True),
        ),
        Strategy(
            "random",
            "none",
            "uniformly random feasible inputs",
            choose_fn=_random,
            needs=Needs(fast_path=False),
        ),
    ]
}
