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


SINGLE_AGES = 110  # ages 0..109; WPP's open bin 100+ is spread over 100..109


@lru_cache(maxsize=4)
def single_year_data(country: str, year: int, ages: int = SINGLE_AGES):
    """Population ``N (ages,)`` and daily contacts ``C (ages, ages)`` by single year of age.

    Both are spread from five-year bins by mass-preserving methods:

    * population: the cumulative population at the bin edges 0, 5, ..., 100 and
      ``ages`` (WPP's 100+ bin taken to end there) is interpolated by a monotone
      cubic (PCHIP) and differenced at whole years, so each bin's total is kept
      exactly and no age gets a negative count;
    * contacts: a person of age ``a`` in Prem et al.'s bin ``A`` (75+ for ages 75
      and over) has bin ``A``'s ``C[A, B]`` contacts with bin ``B``, shared among
      the single ages ``b`` of ``B`` in proportion to their population:
      ``C1[a, b] = C[A, B] · N1[b] / N_B``, so each row keeps its bin totals.
    """
    import starsim_data
    from scipy.interpolate import PchipInterpolator

    M = np.asarray(starsim_data.load(country, which="prem", kind="all"), dtype=float)
    pop = starsim_data.load(country, which="population")
    pop = pop[pop["Time"] == year].groupby("AgeGrp")["Value"].sum()
    starts = np.array(sorted(pop.index), dtype=float)
    if M.shape != (16, 16) or starts[0] != 0 or starts[-1] >= ages:
        raise RuntimeError(f"unexpected starsim-data shapes: contacts {M.shape}, bins {starts}")
    edges = np.append(starts, ages)
    cumulative = np.concatenate([[0.0], np.cumsum(pop.loc[starts].to_numpy(dtype=float))])
    N1 = np.diff(PchipInterpolator(edges, cumulative)(np.arange(ages + 1)))
    prem_bin = np.minimum(np.arange(ages) // 5, 15)
    N_bin = np.bincount(prem_bin, weights=N1, minlength=16)
    C1 = M[prem_bin][:, prem_bin] * (N1 / N_bin[prem_bin])[None, :]
    return N1, C1
