"""Diagnostics of a hyperparameter fit (arviz-stats): r-hat, ESS, Pareto k̂, divergences.

Every fit is judged by :data:`CONVERGENCE` on the draws its predictions use
(:attr:`FitDiagnostics.draws_used`); the thresholds, one table for the whole
package, are in the documentation's "Diagnostics" section (docs/concepts.md).
A fit that still fails after its repairs raises one :class:`DiagnosticsWarning`
naming the GP and the numbers, attributed to the user's own line.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from pp_decomp._runtime import warn


@dataclass(frozen=True)
class Convergence:
    """The thresholds a fit's draws must meet (Vehtari et al. 2021, 2024).

    NUTS chains used as they ran: rank-normalised split ``R̂ ≤ rhat_max``, bulk
    and tail ESS ``≥ ess_min`` for every hyperparameter, at most
    ``divergences_max`` divergent transitions. Weighted draws (chains weighed by
    importance sampling, importance draws of a proposal around the previous
    posterior): the weights' Pareto ``k̂ ≤ pareto_k_max`` and ESS
    ``≥ ess_min``; importance draws of the prior: ``k̂ ≤ pareto_k_max`` and
    ESS at least the draws kept. Why these values: docs/design.md, "Convergence".
    """

    rhat_max: float = 1.01
    ess_min: float = 400.0
    divergences_max: int = 0
    pareto_k_max: float = 0.7


CONVERGENCE = Convergence()


KEPT = "kept"  # FitDiagnostics.inference of a failed refit whose previous draws stay


class DiagnosticsWarning(UserWarning):
    """A hyperparameter fit failed a convergence check."""


@dataclass(frozen=True)
class FitDiagnostics:
    """Convergence summary of one fit (``nan`` where a quantity does not apply).

    ``attempts`` counts the NUTS runs (1 + repairs); ``first_ok`` says whether
    the first run already met the thresholds, ``converged`` whether the one in use does.
    ``reweighted``: the NUTS chains disagreed and were weighed by importance
    sampling (:mod:`pp_decomp.components.inference.reweight`); then ``rhat_max`` and
    ``divergences`` are the chains', the ESS is the importance weights' and
    ``pareto_k`` their Pareto ``k̂``, and those two are what is checked.
    ``proposal``: for ``inference="importance"``, what was weighed: draws of the
    ``"prior"`` (:mod:`pp_decomp.components.inference.importance`) or of a proposal around
    the previous ``"posterior"``'s draws (:mod:`pp_decomp.components.inference.refresh`);
    such a fit is used only where its weights passed their checks.
    ``inference="kept"``: a refit on many points whose weights failed them; the
    previous draws stay in use (:mod:`pp_decomp.loop.updaters.fast`), not converged.
    """

    inference: str
    n_draws: int
    rhat_max: float = float("nan")
    ess_bulk_min: float = float("nan")
    ess_tail_min: float = float("nan")
    divergences: int = 0
    seconds: float = float("nan")
    chains: int = 1
    attempts: int = 1
    first_ok: bool = True
    converged: bool = True
    reweighted: bool = False
    pareto_k: float = float("nan")
    proposal: str = ""

    @property
    def draws_used(self) -> str:
        """What the fit's predictions use: ``"map"`` (one point), ``"fixed"`` (given
        draws), ``"chains"`` (NUTS draws as they ran), ``"reweighted chains"``, or
        ``"prior importance"`` / ``"posterior importance"`` (weighted draws of a proposal)."""
        if self.inference == "nuts":
            return "reweighted chains" if self.reweighted else "chains"
        if self.inference == "importance":
            return f"{self.proposal or 'prior'} importance"
        return self.inference

    @property
    def kept(self) -> bool:
        """Whether the refit failed and the previous draws stay in use (``inference=KEPT``)."""
        return self.inference == KEPT

    @property
    def weighted(self) -> bool:
        """Whether the draws in use are importance-weighted (judged by ESS and ``k̂``)."""
        return self.reweighted or self.inference == "importance"

    def ess_needed(self, criteria: Convergence | None = None) -> float:
        """The ESS the draws in use must reach: the draws kept for prior importance,
        ``ess_min`` for chains and other weighted draws, NaN for a point (MAP, fixed)."""
        c = criteria or CONVERGENCE
        if self.inference not in ("nuts", "importance"):
            return float("nan")
        return float(self.n_draws) if self.weighted and self.proposal == "prior" else c.ess_min

    def problems(self, criteria: Convergence | None = None) -> list[str]:
        """Why the draws in use fail :data:`CONVERGENCE` (empty when they pass)."""
        c = criteria or CONVERGENCE
        if self.weighted:
            need = self.ess_needed(c)
            return _weight_problems(self.ess_bulk_min, self.pareto_k, need, c, self.draws_used)
        if self.inference != "nuts":
            return []
        out = []
        if not self.rhat_max <= c.rhat_max:
            out.append(f"r-hat {self.rhat_max:.3f} > {c.rhat_max}")
        if not self.ess_bulk_min >= c.ess_min:
            out.append(f"bulk ESS {self.ess_bulk_min:.0f} < {c.ess_min:.0f}")
        if not self.ess_tail_min >= c.ess_min:
            out.append(f"tail ESS {self.ess_tail_min:.0f} < {c.ess_min:.0f}")
        if self.divergences > c.divergences_max:
            out.append(f"{self.divergences} divergent transition(s)")
        return out

    def as_dict(self) -> dict:
        """The diagnostics as a plain dict (for results attributes and JSON)."""
        return asdict(self)


def _weight_problems(ess: float, k: float, ess_min: float, c: Convergence, kind: str) -> list[str]:
    out = [] if k <= c.pareto_k_max else [f"Pareto k {k:.2f} > {c.pareto_k_max} ({kind})"]
    if not ess >= ess_min:
        out.append(f"importance ESS {ess:.0f} < {ess_min:.0f} ({kind})")
    return out


def summarize_nuts(idata, var_names: list[str], seconds: float = float("nan")) -> FitDiagnostics:
    """r-hat (max), bulk and tail ESS (min) over ``var_names`` and the divergence count."""
    import arviz_stats

    post = idata["posterior"]
    chains = int(post.sizes["chain"])
    rhat = arviz_stats.rhat(idata, var_names=var_names)
    ess_bulk = arviz_stats.ess(idata, var_names=var_names, method="bulk")
    ess_tail = arviz_stats.ess(idata, var_names=var_names, method="tail")

    def reduce(ds, fn):
        vals = np.concatenate([np.ravel(ds[v].values) for v in var_names])
        return float(fn(vals))

    div = int(np.asarray(idata["sample_stats"]["diverging"]).sum())
    diag = FitDiagnostics(
        inference="nuts",
        n_draws=int(chains * post.sizes["draw"]),
        rhat_max=reduce(rhat, np.nanmax),
        ess_bulk_min=reduce(ess_bulk, np.nanmin),
        ess_tail_min=reduce(ess_tail, np.nanmin),
        divergences=div,
        seconds=seconds,
        chains=chains,
    )
    return diag


def warn_if_bad(diag: FitDiagnostics, name: str) -> None:
    """Emit a :class:`DiagnosticsWarning` naming GP ``name`` if ``diag`` has problems."""
    problems = diag.problems()
    if problems:
        repaired = f" after {diag.attempts - 1} repair(s)" if diag.attempts > 1 else ""
        warn(
            f"GP {name!r}: NUTS fit did not converge{repaired}: {'; '.join(problems)}. "
            "Its draws are used as they are; more data or other priors usually help.",
            DiagnosticsWarning,
        )
