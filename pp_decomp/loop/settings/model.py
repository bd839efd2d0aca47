"""How each component is modelled (:class:`ModelSettings`), validated where it is built."""

from __future__ import annotations

from dataclasses import dataclass, field

from pp_decomp.additive import AdditiveSettings
from pp_decomp.components import KnownKernels, Priors
from pp_decomp.components.gp.priors import as_priors
from pp_decomp.kernels import DEFAULT_KERNEL, canonical_kernel
from pp_decomp.loop.settings.checks import (
    check_copula,
    check_correlated,
    check_input_warping,
    check_output_warp,
    known_kernels_for,
)


@dataclass(frozen=True)
class ModelSettings:
    """The component models of a run: what each GP is and what it sees.

    Parameters
    ----------
    kernel : str
        The covariance family of every GP a strategy fits unless ``components``
        gives one (default Matérn 3/2).
    priors : Priors
        The hyperparameter priors of those GPs.
    known_kernels : KnownKernels or None
        The fixed kernels of an ``inference="fixed"`` run.
    correlated : bool
        One coregionalised GP of all components instead of independent ones.
    outcome_transform : str or tuple of str
        The scale each component GP regresses (``"none"``, ``"log"``; one per
        component as a tuple).
    copula : bool
        A Gaussian copula correlates the independent components' (or network nodes') draws.
    components : tuple of (str, model)
        Users' own component models by name.
    additive : AdditiveSettings
        The learnt additive structure of ``add-gp-ucb``-like strategies.
    input_warping : bool
        Those GPs' kernel on Kumaraswamy-warped inputs (:func:`~pp_decomp.kernels.Warped`
        of ``kernel`` with ``priors``), its shapes inferred with the other
        hyperparameters (default off); the ``components`` with their own models
        keep them as given (warp those in their own kernels). A network node warps
        its own inputs only (:func:`~pp_decomp.loop.updaters.network.warped_node_kernel`).
    output_warp : str or None
        A learned output warp (``"sinh-arcsinh"``,
        :class:`~pp_decomp.components.gp.warped.WarpedGP`) for every component GP
        without a model of its own in ``components`` (default ``None``: none).

    Example
    -------
    >>> from pp_decomp.loop.settings import ModelSettings
    >>> ModelSettings().kernel
    'matern32'
    """

    kernel: str = DEFAULT_KERNEL
    priors: Priors = field(default_factory=Priors)
    known_kernels: KnownKernels | None = None
    correlated: bool = False
    outcome_transform: str | tuple = "none"
    copula: bool = False
    components: tuple = ()
    additive: AdditiveSettings = field(default_factory=AdditiveSettings)
    input_warping: bool = False
    output_warp: str | None = None

    @classmethod
    def build(
        cls, problem, strategy, inference: str, kw: dict, components: tuple, transform
    ) -> ModelSettings:
        """Check the model arguments of ``kw`` against ``problem`` (as its GPs see it),
        the strategy object and the inference method, and fill in the defaults;
        ``components`` and ``transform`` are already checked."""
        known = known_kernels_for(problem, inference, kw.get("known_kernels"))
        kernel = kw.get("kernel")
        if known is not None and kernel is not None and canonical_kernel(kernel) != known.kernel:
            raise ValueError(
                f"kernel={kernel!r} differs from the known kernels' family {known.kernel!r}"
            )
        kernel = known.kernel if known is not None else canonical_kernel(kernel or DEFAULT_KERNEL)
        correlated = kw.get("correlated", False)
        if not isinstance(correlated, bool):
            raise TypeError(f"correlated must be True or False; got {correlated!r}")
        if correlated:
            check_correlated(strategy, problem, inference, kernel, kw.get("fast"))
        additive = kw.get("additive_settings") or AdditiveSettings()
        if not isinstance(additive, AdditiveSettings):
            raise TypeError("additive_settings must be a pp_decomp.additive.AdditiveSettings")
        warping = check_input_warping(
            kw.get("input_warping", False), strategy, known, correlated, components
        )
        return cls(
            kernel=kernel,
            priors=as_priors(kw.get("priors") or None),
            known_kernels=known,
            correlated=correlated,
            outcome_transform=transform,
            copula=check_copula(kw.get("copula"), strategy, problem, correlated, inference),
            components=components,
            additive=additive,
            input_warping=warping,
            output_warp=check_output_warp(
                kw.get("output_warp"), strategy, known, correlated, warping
            ),
        )
