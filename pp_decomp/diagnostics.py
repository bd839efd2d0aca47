"""ArviZ diagnostics of a hyperparameter fit: r-hat, ESS and divergences.

Every NUTS fit is summarised; a :class:`DiagnosticsWarning` names the component
whose fit looks unreliable, so a bad refit never passes silently.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import arviz as az
import numpy as np

RHAT_MAX = 1.05
ESS_MIN = 100.0


class DiagnosticsWarning(UserWarning):
    """A hyperparameter fit failed a convergence check."""


@dataclass(frozen=True)
class FitDiagnostics:
    """Convergence summary of one fit (``nan`` where a quantity does not apply)."""

    inference: str
    n_draws: int
    rhat_max: float = float("nan")
    ess_bulk_min: float = float("nan")
    ess_tail_min: float = float("nan")
    divergences: int = 0
    seconds: float = float("nan")

    def problems(self, rhat_max: float = RHAT_MAX, ess_min: float = ESS_MIN) -> list[str]:
        """Human-readable reasons the fit is unreliable (empty when it is fine)."""
        out = []
        if self.rhat_max > rhat_max:
            out.append(f"r-hat {self.rhat_max:.3f} > {rhat_max}")
        if self.ess_bulk_min < ess_min:
            out.append(f"bulk ESS {self.ess_bulk_min:.0f} < {ess_min:.0f}")
        if self.ess_tail_min < ess_min:
            out.append(f"tail ESS {self.ess_tail_min:.0f} < {ess_min:.0f}")
        if self.divergences > 0:
            out.append(f"{self.divergences} divergent transition(s)")
        return out

    def as_dict(self) -> dict:
        """The diagnostics as a plain dict (for results attributes and JSON)."""
        return asdict(self)


def summarize_nuts(idata, var_names: list[str], seconds: float = float("nan")) -> FitDiagnostics:
    """r-hat (max), bulk and tail ESS (min) over ``var_names`` and the divergence count."""
    post = idata.posterior
    n_draws = int(post.sizes["chain"] * post.sizes["draw"])
    rhat = az.rhat(idata, var_names=var_names)
    ess_bulk = az.ess(idata, var_names=var_names, method="bulk")
    ess_tail = az.ess(idata, var_names=var_names, method="tail")

    def reduce(ds, fn):
        vals = np.concatenate([np.ravel(ds[v].values) for v in var_names])
        return float(fn(vals))

    div = int(np.asarray(idata.sample_stats["diverging"]).sum())
    return FitDiagnostics(
        inference="nuts",
        n_draws=n_draws,
        rhat_max=reduce(rhat, np.nanmax),
        ess_bulk_min=reduce(ess_bulk, np.nanmin),
        ess_tail_min=reduce(ess_tail, np.nanmin),
        divergences=div,
        seconds=seconds,
    )


def warn_if_bad(diag: FitDiagnostics, component: str) -> None:
    """Emit a :class:`DiagnosticsWarning` naming ``component`` if ``diag`` has problems."""
    problems = diag.problems()
    if problems:
        warnings.warn(
            f"component {component!r}: NUTS fit looks unreliable: {'; '.join(problems)}. "
            "Consider more tune/draws or checking the priors.",
            DiagnosticsWarning,
            stacklevel=3,
        )
