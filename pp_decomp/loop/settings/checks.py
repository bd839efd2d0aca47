"""Checks across settings: which combinations of strategy, problem, inference, kernel,
correlated components, copula, outcome transform, output warp and warm start a run
accepts, each refused by name before any work. A setting the strategy or the problem
cannot take is an :class:`~pp_decomp.strategies.UnsupportedSetting`; settings that
contradict each other are a plain ValueError."""

from __future__ import annotations

import warnings

from pp_decomp.choices import FITTED_INFERENCE, OUTPUT_WARPS
from pp_decomp.components import KnownKernels
from pp_decomp.components.correlated.density import CORRELATED_KERNELS
from pp_decomp.loop.component_models import check_warp_run
from pp_decomp.problem import is_identity
from pp_decomp.strategies import UnsupportedSetting

# the strategies' surrogates whose GPs a copula can couple: a decomposed strategy's
# components and a network strategy's nodes
COPULA_SURROGATES = ("decomposed", "network")


def check_correlated(strategy, problem, inference: str, kernel: str, fast) -> None:
    """Refuse ``correlated=True`` where correlated components cannot run, by name."""
    if fast:
        raise ValueError(
            "fast=True reweights independent component GPs; it cannot run with "
            "correlated=True (leave fast unset)"
        )
    if strategy.surrogate != "decomposed":
        raise UnsupportedSetting(
            f"correlated=True correlates the component GPs of a decomposed strategy; "
            f"strategy {strategy.name!r} models {strategy.surrogate!r}"
        )
    if strategy.with_composed:
        raise UnsupportedSetting(
            f"correlated=True models the components only; strategy {strategy.name!r} "
            "also fits one GP of g, which the correlated model does not update"
        )
    if problem.n_components < 2:
        raise UnsupportedSetting(
            f"correlated=True needs at least 2 components; problem {problem.name!r} has "
            f"{problem.n_components}"
        )
    if inference not in FITTED_INFERENCE:
        raise ValueError(f"correlated=True needs inference 'map' or 'nuts'; got {inference!r}")
    if kernel not in CORRELATED_KERNELS:
        raise ValueError(f"correlated=True needs kernel in {CORRELATED_KERNELS}; got {kernel!r}")


def check_input_warping(warping, strategy, known, correlated: bool, components: tuple) -> bool:
    """``input_warping``, refused by name where the run's GPs are not the loop's
    independent component or composed GPs on a fitted kernel; the components that
    bring their own models (``components``: ``(name, model)`` pairs) keep them,
    unwarped, with a warning naming them."""
    if not isinstance(warping, bool):
        raise TypeError(f"input_warping must be True or False; got {warping!r}")
    if not warping:
        return False
    if known is not None:
        raise ValueError(
            "input_warping=True warps fitted kernels; inference='fixed' has them known"
        )
    if correlated:
        raise ValueError(
            "input_warping=True warps the independent GPs' kernels; correlated=True fits one "
            "coregionalised GP: choose one"
        )
    if components:
        names = [name for name, _ in components]
        warnings.warn(
            f"input_warping=True warps the run's kernel; components {names} keep their own "
            f"models as given (warp those with K.Warped(...) in their kernels)",
            UserWarning,
            stacklevel=4,
        )
    if strategy.surrogate not in ("decomposed", "composed", "network"):
        raise UnsupportedSetting(
            f"input_warping=True warps the component, composed or node GPs; strategy "
            f"{strategy.name!r} models {strategy.surrogate!r}"
        )
    return True


def check_output_warp(warp, strategy, known, correlated: bool, input_warping: bool):
    """``output_warp``: ``None``, or a learned output warp (``"sinh-arcsinh"``) for every
    component GP without a model of its own, refused by name where those GPs are not
    the loop's independent, fitted ones or the strategy does not sample them."""
    if warp is None:
        return None
    if warp not in OUTPUT_WARPS:
        raise ValueError(f"output_warp must be None or one of {OUTPUT_WARPS}; got {warp!r}")
    if known is not None:
        raise ValueError(f"output_warp={warp!r} is learned; inference='fixed' has known kernels")
    if correlated:
        raise ValueError(
            f"output_warp={warp!r} warps independent component GPs; correlated=True fits one "
            "coregionalised GP: choose one"
        )
    if input_warping:
        raise ValueError(
            f"output_warp={warp!r} takes the built-in kernels and input_warping=True makes "
            "the kernel an expression: choose one"
        )
    check_warp_run(f"output_warp={warp!r}", strategy)
    return warp


def copula_applies(strategy, problem, correlated: bool, inference: str) -> bool:
    """Whether the copula is on by default (``copula=None``): for the joint bounds of
    a decomposed strategy's independent, fitted component GPs (at least two);
    known kernels (``inference="fixed"``) keep the papers' independent components."""
    return (
        strategy.surrogate == "decomposed"
        and strategy.needs.joint
        and problem.n_components >= 2
        and not correlated
        and inference != "fixed"
    )


def check_copula(copula, strategy, problem, correlated: bool, inference: str) -> bool:
    """``copula``: ``None`` is :func:`copula_applies`; ``True`` is refused by name
    where there are no independent component GPs (or node GPs of a network,
    :class:`~pp_decomp.network.NetworkSurrogate`) to correlate
    (:mod:`pp_decomp.composition.core`)."""
    if copula is None:
        return copula_applies(strategy, problem, correlated, inference)
    if not isinstance(copula, bool):
        raise TypeError(f"copula must be True, False or None; got {copula!r}")
    if not copula:
        return False
    if strategy.surrogate not in COPULA_SURROGATES:
        raise UnsupportedSetting(
            f"copula=True correlates the component GPs of a decomposed strategy or the node "
            f"GPs of a network strategy; strategy {strategy.name!r} models {strategy.surrogate!r}"
        )
    if strategy.surrogate == "decomposed" and not strategy.needs.joint:
        raise UnsupportedSetting(
            f"copula=True correlates the components' samples and linear variance; "
            f"strategy {strategy.name!r} bounds each component's marginal only"
        )
    if problem.n_components < 2:
        raise UnsupportedSetting(
            f"copula=True needs at least 2 components; problem {problem.name!r} has "
            f"{problem.n_components}"
        )
    if correlated:
        raise ValueError(
            "copula=True correlates independent component GPs; correlated=True models "
            "the correlation in one GP already: choose one"
        )
    return True


def check_transform(transform: str, strategy, inference: str) -> None:
    """Refuse an outcome transform where the run has no component GPs (or a network's
    node GPs) to apply it to."""
    if is_identity(transform):
        return
    if strategy.surrogate not in ("decomposed", "network"):
        raise UnsupportedSetting(
            f"outcome_transform={transform!r} transforms the component GPs of a decomposed "
            f"strategy or the node GPs of a network strategy; strategy {strategy.name!r} "
            f"models {strategy.surrogate!r}"
        )
    if strategy.needs.linear_g:
        raise UnsupportedSetting(
            f"{strategy.name}'s analytic bound needs a linear g; with outcome_transform="
            f"{transform!r} the GPs model {transform} y_j and g is composed with the inverse, "
            "which is not linear: use d-gpucb-mc-min (the default), d-gpucb-mc or d-gpucb-lipschitz"
        )
    if inference == "fixed":
        raise ValueError(
            f"outcome_transform={transform!r} needs inference 'map' or 'nuts': known "
            "kernels describe the components in their own units"
        )


def known_kernels_for(problem, inference: str, known) -> KnownKernels | None:
    """The known kernels of an ``inference="fixed"`` run (``known``, else the problem's);
    refused with any other inference, or when neither gives them."""
    if inference != "fixed":
        if known is not None:
            raise ValueError(
                f"known_kernels is used only with inference='fixed'; got inference={inference!r}"
            )
        return None
    known = problem.known_kernels if known is None else known
    if known is None:
        raise UnsupportedSetting(
            f"inference='fixed' needs known_kernels=, and problem {problem.name!r} "
            "has no known_kernels"
        )
    if not isinstance(known, KnownKernels):
        raise TypeError(f"known_kernels must be a KnownKernels; got {type(known).__name__}")
    return known.check(problem.n_components, problem.dim)


def check_warm_start(warm_start, strategy, inference: str) -> bool:
    """``warm_start``, refused by name where no MAP refit of the loop's GPs would use it."""
    if not isinstance(warm_start, bool):
        raise TypeError(f"warm_start must be True or False; got {warm_start!r}")
    if not warm_start:
        return False
    if inference != "map":
        raise ValueError(
            f"warm_start=True starts each MAP refit at the last fit's mode; it needs "
            f"inference='map', got {inference!r}"
        )
    if strategy.surrogate == "additive":
        raise UnsupportedSetting(
            f"warm_start=True applies to the component and composed GPs' refits; strategy "
            f"{strategy.name!r} learns an additive structure, which it refits its own way"
        )
    return True
