"""Real contact matrices and populations, aggregated to coarse age groups.

Both come offline from the PyPI package ``starsim-data`` (``load`` only, never
``fetch``): Prem et al. (2021) all-settings contact matrices (16 five-year bins,
0-4 ... 75+; GPL-3.0 data) and UN World Population Prospects 2024 populations
by five-year bin (CC BY 3.0 IGO).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=8)
def contact_data(country: str, year: int, groups: tuple[tuple[int, int], ...]):
    """Population ``N (G,)`` and contact matrix ``C (G, G)`` for ``groups`` of 5-year bins.

    ``groups`` lists half-open ranges of bin indices (bin 15 is 75+). ``C[a, b]``
    is the mean daily number of contacts a person in group ``a`` has with group
    ``b``: the bins' rows weighted by their population, columns summed.
    """
    import starsim_data

    M = np.asarray(starsim_data.load(country, which="prem", kind="all"), dtype=float)
    pop = starsim_data.load(country, which="population")
    pop = pop[pop["Time"] == year].groupby("AgeGrp")["Value"].sum()
    bins = np.array([pop.loc[a] for a in range(0, 75, 5)] + [pop.loc[75:].sum()], dtype=np.float64)
    if M.shape != (16, 16) or bins.shape != (16,):
        raise RuntimeError(
            f"unexpected starsim-data shapes: contacts {M.shape}, population {bins.shape}"
        )
    N = np.array([bins[a:b].sum() for a, b in groups])
    C = np.empty((len(groups), len(groups)))
    for i, (a, b) in enumerate(groups):
        rows = bins[a:b, None] * M[a:b]
        C[i] = [rows[:, c:d].sum() / bins[a:b].sum() for c, d in groups]
    return N, C
