"""A benchmark's plot: cumulative and average regret per problem and strategy."""

from __future__ import annotations

import numpy as np
import xarray as xr

from pp_decomp.apps.figures import FIGURES as plt


def plot_bench(ds: xr.Dataset, path) -> None:
    """Cumulative and average regret with standard-error bands, one column per problem."""
    probs = list(ds["problem"].values)
    fig, axes = plt.subplots(
        2, len(probs), figsize=(4.5 * len(probs), 7), squeeze=False, constrained_layout=True
    )
    it = ds["iteration"].values
    for c, p in enumerate(probs):
        for k, s in enumerate(ds["strategy"].values):
            color = f"C{k}"  # one colour per strategy across panels
            cum = ds["cumulative_regret"].sel(problem=p, strategy=s).values
            cum = cum[np.all(np.isfinite(cum), axis=1)]
            if len(cum) == 0:
                continue
            for r, arr in enumerate((cum, cum / it)):
                m = arr.mean(0)
                se = arr.std(0, ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0 * m
                axes[r, c].plot(it, m, label=s, color=color)
                axes[r, c].fill_between(it, m - se, m + se, alpha=0.15, color=color)
        axes[0, c].set_title(p)
        axes[0, c].set_ylabel("cumulative regret")
        axes[1, c].set_ylabel("average regret")
        axes[1, c].set_xlabel("iteration")
        axes[1, c].set_yscale("log")
        axes[0, c].legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)
