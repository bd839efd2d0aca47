"""What a problem's numbers are: input names and the units of its inputs,
components and objective, carried into every results file.

``units`` is a dict with any of the keys ``"inputs"`` (one string for all, or
one per input), ``"components"`` (one, or one per component) and
``"objective"``; a unit not declared is ``None``. The older
``metadata["units"]`` keys ``"x"`` and ``"y"`` mean ``"inputs"`` and
``"components"``.

Example
-------
>>> from pp_decomp.units import Units
>>> u = Units.build({"inputs": ["m", "s"], "objective": "W"}, dim=2, n_components=1)
>>> u.inputs, u.components, u.objective
(('m', 's'), (None,), 'W')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

KEYS = ("inputs", "components", "objective")
LEGACY = {"x": "inputs", "y": "components", "objective": "objective"}


@dataclass(frozen=True)
class Units:
    """Units of each input ``(d,)``, each component ``(J,)`` and the objective."""

    inputs: tuple[str | None, ...]
    components: tuple[str | None, ...]
    objective: str | None

    @classmethod
    def build(cls, units: dict | None, dim: int, n_components: int) -> Units:
        """``units`` checked against ``dim`` inputs and ``n_components``; a ValueError
        names a key or a length that does not fit."""
        units = dict(units or {})
        if unknown := sorted(set(units) - set(KEYS)):
            raise ValueError(f"units keys must be among {KEYS}; got {unknown}")
        objective = units.get("objective")
        if objective is not None and not isinstance(objective, str):
            raise TypeError(f"units['objective'] must be a string; got {objective!r}")
        return cls(
            _each(units.get("inputs"), dim, "inputs"),
            _each(units.get("components"), n_components, "components"),
            objective,
        )

    @classmethod
    def from_legacy(cls, legacy: dict, dim: int, n_components: int) -> Units:
        """From ``metadata["units"]`` (keys ``x``, ``y``, ``objective``)."""
        return cls.build(
            {LEGACY[k]: v for k, v in legacy.items() if k in LEGACY}, dim, n_components
        )

    def as_dict(self) -> dict:
        """The declared units as :meth:`build` takes them."""
        return {
            "inputs": list(self.inputs),
            "components": list(self.components),
            "objective": self.objective,
        }


def _each(value, n: int, key: str) -> tuple[str | None, ...]:
    """One unit per item: a string repeated, or a sequence of ``n``."""
    if value is None or isinstance(value, str):
        return (value,) * n
    if not isinstance(value, Sequence) or len(value) != n:
        raise ValueError(f"units[{key!r}] must be a string or {n} strings; got {value!r}")
    return tuple(None if v is None else str(v) for v in value)


def check_input_names(names, dim: int) -> list[str]:
    """``names`` of the ``dim`` inputs (default ``x0``, ``x1``, ...), distinct."""
    if names is None:
        return [f"x{i}" for i in range(dim)]
    out = [str(n) for n in names]
    if len(out) != dim:
        raise ValueError(f"input_names has {len(out)} names but the domain has {dim} inputs")
    if len(set(out)) != dim:
        dup = sorted({n for n in out if out.count(n) > 1})
        raise ValueError(f"input_names must be distinct; {dup} appear more than once")
    return out
