"""Each component's own model in a run: ``Optimizer(..., components=...)``.

A run's component GPs take the run's ``kernel`` and ``priors`` unless
``components`` gives a component its own model: a
:class:`~pp_decomp.ComponentGP` used as a template (its kernel expression,
priors, noise prior and transform; the input dimension, bounds and name come
from the problem), a kernel expression, or a shorthand string. A component's
``transform="log"`` becomes its outcome transform: the loop regresses
``log y_j`` and composes ``g`` with ``exp`` for that component
(:mod:`pp_decomp.problem`).

A network strategy's node GPs take ``components`` by node name, each model built
on the node's ``Z_k`` (its own inputs, then its parents' outputs;
:mod:`pp_decomp.network`); a node's ``transform="log"`` puts its GP on
``log y_k`` and its sampled paths on ``exp`` of it, which its children read; a
node takes no warp of its parents' columns (:func:`check_node_model`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from pp_decomp.components.gp.gp import ComponentGP
from pp_decomp.components.gp.priors import Priors
from pp_decomp.kernels import Kernel, WarpedFamily
from pp_decomp.network import problem_network
from pp_decomp.prior import Prior
from pp_decomp.problem import check_outcome_transform, model_problem, opaque
from pp_decomp.strategies import STRATEGIES, UnsupportedSetting

WARP_ARGUMENTS = ("warp", "skew", "tail", "loc", "scale")  # a warped GP's template keys


def component_models(problem, value) -> tuple:
    """``((name, template), ...)`` for the components ``value`` names: a sequence
    with one entry per component (``None``: the default model) or a mapping by
    component name; each entry a ``ComponentGP``, a kernel or a shorthand string."""
    if value is None:
        return ()
    names = list(problem.component_names)
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ValueError(
                f"components: {unknown} are not components of problem {problem.name!r}; "
                f"its components are {names}"
            )
        pairs = [(n, value[n]) for n in names if n in value]
    elif isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != len(names):
            raise ValueError(
                f"components has {len(value)} model(s) but problem {problem.name!r} has "
                f"{len(names)} component(s) {names}; pass a dict by name to give only some"
            )
        pairs = list(zip(names, value, strict=True))
    else:
        raise TypeError(
            f"components must be a list (one model per component) or a dict by component "
            f"name; got {type(value).__name__}"
        )
    out = []
    for name, model in pairs:
        if model is None:
            continue
        if isinstance(model, str | Kernel):
            model = ComponentGP(model, name=name)
        if not isinstance(model, ComponentGP):
            raise TypeError(
                f"components[{name!r}] must be a ComponentGP, a kernel or a kernel name; "
                f"got {model!r}"
            )
        out.append((name, model))
    return tuple(out)


def component_transforms(transform, components: tuple, problem):
    """The run's outcome transform (checked) with the components' own
    ``transform="log"``: ``transform`` itself where no component has one, else one
    per component."""
    transform = check_outcome_transform(transform)
    logged = {name for name, gp in components if gp.transform == "log"}
    if not logged:
        return transform
    per = [transform] * problem.n_components if isinstance(transform, str) else list(transform)
    for j, name in enumerate(problem.component_names):
        if name in logged:
            per[j] = "log"
    return per[0] if len(set(per)) == 1 and isinstance(transform, str) else tuple(per)


def warped_components(components: tuple) -> list[str]:
    """The names of the ``(name, ComponentGP)`` pairs whose GP learns an output warp."""
    return [name for name, gp in components if gp.template.get("warp") is not None]


def learns_warp(components: tuple, output_warp=None) -> bool:
    """Whether a run's component GPs learn an output warp: one of their own models
    (``components``), or the run's ``output_warp``."""
    return bool(warped_components(components)) or output_warp is not None


def as_modelled(problem, transform, components: tuple, output_warp=None):
    """The problem as the component GPs see it: :func:`~pp_decomp.problem.model_problem`
    under the outcome ``transform``, and a general ``g``
    (:func:`~pp_decomp.problem.opaque`) where a component learns an output warp (its
    own model's, or the run's ``output_warp``), whose samples enter ``g`` through each
    draw's own warp."""
    out = model_problem(problem, transform)
    return opaque(out) if learns_warp(components, output_warp) and out is problem else out


def takes_warped(strategy) -> bool:
    """Whether ``strategy`` takes warped components: it composes the components
    through their samples (a decomposed strategy on their joint posterior without a
    linear form), which a warped GP maps to its outputs draw by draw."""
    needs = strategy.needs
    return strategy.surrogate == "decomposed" and needs.joint and not needs.linear_g


def check_warp_run(what: str, strategy) -> None:
    """Refuse a learned output warp (``what``: how the user gave it) in a run that cannot
    take it: a strategy that does not sample the components (an
    :class:`~pp_decomp.strategies.UnsupportedSetting`)."""
    if not takes_warped(strategy):
        takers = [s.name for s in STRATEGIES.values() if takes_warped(s)]
        raise UnsupportedSetting(
            f"{what} needs a strategy that samples the components through g "
            f"({', '.join(takers)}); got strategy {strategy.name!r}"
        )


def _check_warped(components: tuple, strategy, kw: dict) -> None:
    """Refuse, naming the component, a warped GP in a run that cannot take it."""
    bent = warped_components(components)
    if bent:
        warp = dict(components)[bent[0]].template["warp"]
        check_warp_run(f"components[{bent[0]!r}]: warp={warp!r}", strategy)


def check_components(components: tuple, strategy, problem, kw: dict) -> tuple:
    """``components``, refused where the run has no component or node GPs to give them
    and each checked on the problem (its kernel's dimensions and parameters on the
    inputs its GP reads: the problem's, or a network node's ``Z_k``) before any
    evaluation; a PyMC model's template is a copy, built on those inputs (so that the
    run records the model as built), the user's own left as it was."""
    if not components:
        return components
    if strategy.surrogate not in ("decomposed", "network"):
        raise ValueError(
            f"components= gives the component GPs of a decomposed strategy (or the node GPs "
            f"of a network strategy) their models; strategy {strategy.name!r} models "
            f"{strategy.surrogate!r}"
        )
    if kw.get("correlated"):
        raise ValueError(
            "components= gives independent component GPs their models; correlated=True "
            "fits one GP of all the components: choose one"
        )
    if kw.get("inference") == "fixed":
        raise ValueError("components= needs inference 'map' or 'nuts': known kernels are fixed")
    priors = kw.get("priors") or Priors()
    network = problem_network(problem) if strategy.surrogate == "network" else None
    _check_warped(components, strategy, kw)
    out = []
    for name, gp in components:
        args = loop_arguments(gp, priors, problem, name, 1)
        if network is not None:  # a node's GP reads Z_k, scaled at each refit
            node = network.nodes[network.index(name)]
            check_node_model(gp, node)
            args.update(input_dim=node.width, bounds=None)
        built = ComponentGP(**args)
        if hasattr(built, "build"):  # a PyMC model: built (not compiled) to check it
            gp = copy.copy(gp)
            gp.input_dim, gp.name = args["input_dim"], name
            _ = gp.model
        elif hasattr(built, "bound"):
            _ = built.bound  # binds the kernel: raises on dimensions or parameters it lacks
        out.append((name, gp))
    return tuple(out)


def check_node_model(gp: ComponentGP, node) -> None:
    """Refuse, naming the node, a model a network node's GP cannot take: input warping
    on its parents' columns (they are scaled by the parents' observed range, which
    sampled values leave, and the Kumaraswamy warp needs the unit box)."""
    kernel = getattr(gp, "model_kernel", None)
    if kernel is None or not node.parents:
        return
    first_parent = len(node.inputs)
    own = (
        f"restrict it to the node's own inputs with active_dims={list(range(first_parent))}"
        if first_parent
        else "the node reads no inputs of its own: leave the warp out"
    )
    for leaf in kernel.leaves():
        dims = leaf.active_dims
        warps_parents = dims is None or any(d >= first_parent for d in dims)
        if isinstance(leaf, WarpedFamily) and warps_parents:
            raise ValueError(
                f"components[{node.name!r}]: {leaf!r} warps the columns of the node's "
                f"parents {list(node.parents)} (columns {first_parent}-{node.width - 1} of its "
                "inputs), which are scaled by their observed range and leave the unit box the "
                f"warp needs; {own}"
            )


def loop_arguments(template: ComponentGP, priors, problem, name: str, max_draws: int) -> dict:
    """``ComponentGP`` keyword arguments of component ``name`` in a loop, from its
    ``template``: its kernel, priors and noise; the problem's dimension and bounds.
    A log transform is the loop's (an outcome transform), so the GP standardises."""
    t = template.template
    warp = {} if t.get("warp") is None else {k: t[k] for k in WARP_ARGUMENTS}
    if "build" in t:
        return dict(
            build=t["build"],
            input_dim=problem.dim,
            standardize=t["transform"] is not None,
            bounds=problem.domain.bounds,
            name=name,
            max_draws=max_draws,
        )
    return dict(
        kernel=t["kernel"],
        input_dim=problem.dim,
        priors=t["priors"] if t["priors"] is not None else priors,
        noise=t["noise"],
        standardize=t["transform"] is not None,
        bounds=problem.domain.bounds,
        name=name,
        max_draws=max_draws,
        **warp,
    )


def model_from_dict(data: dict) -> ComponentGP | dict:
    """A template ``ComponentGP`` from :meth:`ComponentGP.model_dict`, with its learned
    output warp and the warp's priors where it has one; a PyMC model's description
    stays as it is (its ``build`` function is the user's, not stored)."""
    if "pymc" in data:
        return data
    warp = dict(data.get("warp") or {})
    if warp:
        family = warp.pop("family")
        warp = {"warp": family} | {
            k: None if v is None else Prior.from_dict(v) for k, v in warp.items()
        }
    return ComponentGP(
        Kernel.from_dict(data["kernel"]),
        priors=None if data.get("priors") is None else Priors(**data["priors"]),
        noise=None if data.get("noise") is None else Prior.from_dict(data["noise"]),
        transform=data.get("transform", "standardize"),
        **warp,
    )
