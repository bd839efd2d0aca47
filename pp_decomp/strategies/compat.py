"""One rule for where a strategy can run: used by the optimiser, the benchmark and the CLI."""

from __future__ import annotations

from pp_decomp.peers import botorch_available
from pp_decomp.space import Box
from pp_decomp.strategies.catalog import STRATEGIES, Strategy
from pp_decomp.validate import canonical_choice


class UnsupportedSetting(ValueError):
    """A setting that a strategy, or a problem, cannot run with, refused by name: the
    settings are sound, the pair is not (a benchmark skips the pair; any other error
    is a wrong setting).

    Example
    -------
    >>> from pp_decomp.models import get_problem
    >>> try:
    ...     check_strategy("d-gpucb", get_problem("environmental"))
    ... except UnsupportedSetting as e:
    ...     print(isinstance(e, ValueError), "linear decomposition" in str(e))
    True True
    """


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name`` in any case (``"D-GPUCB"`` is ``d-gpucb``), or a
    ValueError listing the choices."""
    if isinstance(name, Strategy):
        return name
    key = name.lower() if isinstance(name, str) else name
    if key not in STRATEGIES:
        raise ValueError(f"strategy must be one of {sorted(STRATEGIES)} (any case); got {name!r}")
    return STRATEGIES[key]


def canonical_strategy(name: str, argument: str = "strategy") -> str:
    """The registered name of the strategy ``name`` gives in any case, or a ValueError
    naming ``argument``, the value and the choices."""
    return canonical_choice(name, argument, STRATEGIES)


def default_strategy(
    problem, *, correlated: bool = False, known_kernels=None, fast: bool | None = None
) -> str:
    """The strategy used when none is given.

    * a known function network (``problem.metadata["network"]``): ``network-ucb``,
      the UCB of the objective sampled through the nodes' GPs, each node on its
      inputs and its parents' outputs; except where it cannot run (``correlated=True``,
      known kernels, ``fast=True``), where the rules below apply;
    * a linear ``g``: ``d-gpucb``, the bound ``Σ_j g_j(x) μ_j(x) + β_t^½ σ(x)``;
    * otherwise ``d-gpucb-mc-min``: at each ``x`` the smaller of two upper bounds on
      ``g``, the Monte Carlo quantile of ``g`` over the components' posterior draws
      (``d-gpucb-mc``) and GP-UCB's on one GP of the observed ``g``;
    * ``d-gpucb-mc`` where that second GP cannot be had: with ``correlated=True``
      (one GP of the components only) or with known kernels that have no kernel of
      ``g`` (``KnownKernels(composed=...)``).

    ``known_kernels`` are those of an ``inference="fixed"`` run; ``fast`` is the
    run's ``fast`` as given (``None``: unset). Why this default: docs/design.md,
    "Why these defaults".

    Examples
    --------
    >>> from pp_decomp.models import get_problem
    >>> default_strategy(get_problem("flu")), default_strategy(get_problem("environmental"))
    ('d-gpucb', 'd-gpucb-mc-min')
    >>> default_strategy(get_problem("flu-network"))
    'network-ucb'
    >>> default_strategy(get_problem("flu-network"), correlated=True)
    'd-gpucb-mc'
    """
    network = "network" in problem.metadata
    if network and not correlated and known_kernels is None and not fast:
        return "network-ucb"
    if problem.linear is not None:
        return "d-gpucb"
    if correlated or (known_kernels is not None and known_kernels.composed is None):
        return "d-gpucb-mc"
    return "d-gpucb-mc-min"


def unsupported(
    strategy,
    problem,
    *,
    inference: str = "map",
    n_init: int = 5,
    fast: bool = False,
    known_kernels=None,
) -> str | None:
    """Why ``strategy`` cannot run on ``problem`` with these settings, or ``None``.

    Decided from what the strategy declares it needs (:class:`~pp_decomp.strategies.Needs`)
    and what the problem and settings offer, before any evaluation.
    """
    s = get_strategy(strategy)
    needs, dom = s.needs, problem.domain
    if needs.peer == "botorch":
        if not botorch_available():
            return "it is BoTorch's loop: install the extra, pip install 'pp-decomp[compare]'"
    if needs.linear_g and problem.linear is None:
        return (
            "it needs a linear decomposition (problem.weights) and g is not linear; "
            "use d-gpucb-mc or d-gpucb-lipschitz"
        )
    if needs.incumbent and n_init < 1:
        return "it improves on the best observation, so it needs n_init >= 1"
    if needs.box and (not isinstance(dom, Box) or dom.A is not None):
        return "it maximises group by group, so it needs a Box domain without linear constraints"
    if needs.structure is not None and needs.structure not in problem.metadata:
        return f"it needs the problem's known structure in problem.metadata[{needs.structure!r}]"
    if needs.draws and inference != "nuts":
        return (
            f"it learns from the disagreement of hyperparameter draws, and inference="
            f"{inference!r} has one draw; use inference='nuts' (full Bayes)"
        )
    if fast and not needs.fast_path:
        return "it has no component GPs for the fast path to update"
    if inference == "fixed":
        return _fixed_unsupported(s, problem, known_kernels)
    return None


def _fixed_unsupported(s: Strategy, problem, known_kernels) -> str | None:
    known = problem.known_kernels if known_kernels is None else known_kernels
    if not s.needs.known_kernels:
        return "it learns its own kernels, which the known kernels would not fix"
    if known is None:
        return "inference='fixed' needs known kernels and the problem has no known_kernels"
    if s.surrogate == "composed" and problem.linear is None and known.composed is None:
        return (
            "g is not linear, so its composed GP needs a known kernel of its own "
            "(KnownKernels(composed=...))"
        )
    if s.with_composed and known.composed is None:
        return "its GP of g needs a known kernel of its own (KnownKernels(composed=...))"
    return None


def check_strategy(strategy, problem, **settings) -> Strategy:
    """The strategy, or an :class:`UnsupportedSetting` naming it, the problem and why
    it cannot run there."""
    s = get_strategy(strategy)
    why = unsupported(s, problem, **settings)
    if why is not None:
        raise UnsupportedSetting(
            f"strategy {s.name!r} cannot run on problem {problem.name!r}: {why}"
        )
    return s


def decomposed_bound(strategy, ctx):
    """The upper bound of ``h`` that a decomposed UCB strategy maximises, built on
    ``ctx`` (its ``decomposed`` surrogate, ``beta``, ``rng``); ``None`` for a
    strategy that maximises something else (EI, PI, Thompson, ...)."""
    s = get_strategy(strategy)
    return s.build(ctx) if s.bound else None
