"""Posteriors as ArviZ 1 holds them: an :class:`xarray.DataTree` with a
``posterior`` group of ``(chain, draw, ...)`` variables and, where NUTS ran,
``sample_stats``.

Every posterior pp_decomp exposes (``ComponentGP.idata``, the additive and the
correlated models') is such a tree, so ``arviz.summary``, the
:mod:`arviz_stats` diagnostics and :mod:`arviz_plots` take it as it is.

>>> import numpy as np
>>> tree = from_draws({"ls": np.ones((1, 5, 2))}, inference="map")
>>> tree["posterior"]["ls"].dims
('chain', 'draw', 'ls_dim_0')
"""

from __future__ import annotations

import numpy as np
import xarray as xr


def from_draws(posterior: dict[str, np.ndarray], **attrs) -> xr.DataTree:
    """A tree whose ``posterior`` holds ``posterior``'s ``(chain, draw, ...)``
    arrays, with ``attrs`` (e.g. ``inference="map"``) on that group."""
    from arviz_base import from_dict

    tree = from_dict({"posterior": posterior})
    tree["posterior"].attrs.update(attrs)
    return tree


def draws_dataset(posterior: dict[str, np.ndarray], **attrs) -> xr.Dataset:
    """:func:`from_draws`' ``posterior`` group alone, as a Dataset."""
    return from_draws(posterior, **attrs)["posterior"].to_dataset()


def concat_chains(a: xr.DataTree | None, b: xr.DataTree) -> xr.DataTree:
    """Two runs of one posterior as one tree, ``b``'s chains after ``a``'s (``b``
    alone when ``a`` is None), renumbered ``0..C-1``: the groups ``posterior``,
    ``sample_stats`` and their ``warmup_`` ones that both runs have; any other
    group is dropped."""
    if a is None:
        return b
    groups = {}
    for path in ("posterior", "sample_stats", "warmup_posterior", "warmup_sample_stats"):
        if path in a.children and path in b.children:
            groups[path] = _concat(a[path].to_dataset(), b[path].to_dataset())
    return xr.DataTree.from_dict(groups)


def _concat(x: xr.Dataset, y: xr.Dataset) -> xr.Dataset:
    y = y.assign_coords(chain=y["chain"].values + x.sizes["chain"])
    out = xr.concat([x, y], dim="chain", data_vars="all", coords="minimal", compat="override")
    return out.assign_coords(chain=np.arange(out.sizes["chain"]))


def with_group(tree: xr.DataTree, name: str, data: xr.Dataset) -> xr.DataTree:
    """A copy of ``tree`` with the group ``name`` set to ``data``."""
    out = tree.copy()
    out[name] = xr.DataTree(data)
    return out
