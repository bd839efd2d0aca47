"""Decomposed vs entire GP regression study (Wang et al. 2019, Fig. 2).

Per trial: draw J kernels of one family with random hyperparameters, a random
function ``f_j`` from each, ``g_j ≡ 1``; for every training size ``n = 2..T``
regress with (i) the entire GP on ``y = Σ_j y_j`` (Alg. 1) and (ii) the
decomposed GP (Alg. 2), and record each posterior mean's RMSE against the true
``f = Σ_j f_j`` on a dense test grid, and the mean posterior standard deviation.

``inference="true"`` uses the generating kernels in both models (the paper's
setting, where Theorem 6 applies); ``"map"`` and ``"nuts"`` learn the
hyperparameters from the data, the entire GP learning one kernel of the same
family on the composed output.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from pp_decomp import __version__
from pp_decomp.apps.figures import FIGURES as plt
from pp_decomp.choices import STUDY_INFERENCE
from pp_decomp.components import ComponentGP
from pp_decomp.components.samples import (
    ETA_RANGE,
    LS_RANGE,
    random_kernel_draws,
    sample_function,
)
from pp_decomp.composition import EntireGP, LinearComposition
from pp_decomp.kernels import canonical_kernel
from pp_decomp.validate import check_choice, check_positive, check_positive_int


def _trial(kernel, J, T, d, n_test, noise_sd, inference, rng, fit_kwargs):
    X_test = rng.uniform(size=(n_test, d)) if d > 1 else np.linspace(0, 1, n_test)[:, None]
    X_pool = rng.uniform(size=(T, d))
    X_all = np.vstack([X_test, X_pool])
    truth = [random_kernel_draws(kernel, d, noise_sd, rng) for _ in range(J)]
    F = np.stack([sample_function(kernel, X_all, t, rng) for t in truth], axis=1)
    Y_pool = F[n_test:] + noise_sd * rng.standard_normal((T, J))
    f_test = F[:n_test].sum(axis=1)
    comp = LinearComposition.ones(J)
    bounds = np.array([np.zeros(d), np.ones(d)])
    out = np.full((4, T - 1), np.nan)
    for i, n in enumerate(range(2, T + 1)):
        X, Y = X_pool[:n], Y_pool[:n]
        if inference == "true":
            comps = [
                ComponentGP(kernel, d, standardize=False, name=f"f{j}").condition(
                    X, Y[:, j], truth[j]
                )
                for j in range(J)
            ]
            entire = EntireGP(comps, comp).condition(X, Y)
        else:
            comps = [
                ComponentGP(kernel, d, bounds=bounds, name=f"f{j}").fit(
                    X, Y[:, j], inference, seed=rng, **fit_kwargs
                )
                for j in range(J)
            ]
            entire = ComponentGP(kernel, d, bounds=bounds, name="entire").fit(
                X, comp.combine(Y, X), inference, seed=rng, **fit_kwargs
            )
        dec = comp.posterior(comps, X_test)
        mean_e, var_e = entire.predict(X_test)
        out[:, i] = scores(dec, mean_e, var_e, f_test)
    return out


def scores(dec: xr.Dataset, mean_e, var_e, f_test) -> tuple[float, float, float, float]:
    """RMSE against ``f_test`` and mean posterior sd of the decomposed posterior
    ``dec`` (``mean``, ``variance``) and of the entire GP's ``(mean_e, var_e)``, in
    that order: decomposed RMSE, entire RMSE, decomposed sd, entire sd."""
    return (
        float(np.sqrt(np.mean((dec["mean"].values - f_test) ** 2))),
        float(np.sqrt(np.mean((mean_e - f_test) ** 2))),
        float(np.mean(np.sqrt(dec["variance"].values))),
        float(np.mean(np.sqrt(var_e))),
    )


def regression_study(
    kernel: str = "se",
    n_components: int = 5,
    trials: int = 30,
    max_samples: int = 30,
    seed: int = 0,
    *,
    inference: str = "true",
    input_dim: int = 1,
    n_test: int = 200,
    noise_sd: float = 1e-4,
    progress: bool = False,
    fit_kwargs: dict | None = None,
) -> xr.Dataset:
    """Run the study; RMSE and mean posterior sd per trial and training size.

    Parameters
    ----------
    kernel : {"se", "matern", "matern52", "matern32", "rq"}
    n_components, trials, max_samples : int
        ``J`` components (``g_j ≡ 1``); trials (new kernels, functions, designs); ``n = 2..T``.
    seed : int
        Root seed; trial ``i`` uses the ``i``-th child of ``SeedSequence(seed)``.
    inference : {"true", "map", "nuts"}
        Generating kernels for both models (paper), or learned hyperparameters.
    input_dim, n_test : int
        ``d``; size of the test set (a grid for ``d = 1``, uniform otherwise).
    noise_sd : float
        Observation noise sd of each component (1e-4: the paper's synthetic noise).

    Returns
    -------
    xarray.Dataset
        ``rmse_decomposed``, ``rmse_entire``, ``mean_sd_decomposed``,
        ``mean_sd_entire`` over ``(trial, n_samples)``; the settings and
        ``relative_rmse_improvement = 1 - mean(rmse_dec) / mean(rmse_ent)`` as attributes.
    """
    st = dict(
        kernel=canonical_kernel(kernel),
        n_components=check_positive_int(n_components, "n_components"),
        trials=check_positive_int(trials, "trials"),
        max_samples=check_positive_int(max_samples, "max_samples", minimum=2),
        seed=check_positive_int(seed, "seed", minimum=0),
        inference=check_choice(inference, "inference", STUDY_INFERENCE),
        input_dim=check_positive_int(input_dim, "input_dim"),
        n_test=check_positive_int(n_test, "n_test"),
        noise_sd=check_positive(noise_sd, "noise_sd"),
    )
    children = np.random.SeedSequence(seed).spawn(st["trials"])
    iterator = range(st["trials"])
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc=f"regression {st['kernel']}", unit="trial")
    args = [st[k] for k in ("kernel", "n_components", "max_samples", "input_dim", "n_test")]
    args += [st["noise_sd"], st["inference"]]
    res = np.stack(
        [_trial(*args, np.random.default_rng(children[i]), fit_kwargs or {}) for i in iterator]
    )
    return _study_dataset(res, st)


def _study_dataset(res: np.ndarray, settings: dict) -> xr.Dataset:
    """The study's results ``res (trial, 4, n_samples)`` labelled, with the settings."""
    dims = ("trial", "n_samples")
    T = settings["max_samples"]
    ds = xr.Dataset(
        {
            "rmse_decomposed": (dims, res[:, 0]),
            "rmse_entire": (dims, res[:, 1]),
            "mean_sd_decomposed": (dims, res[:, 2]),
            "mean_sd_entire": (dims, res[:, 3]),
        },
        coords={"trial": np.arange(len(res)), "n_samples": np.arange(2, T + 1)},
    )
    ds.attrs.update(
        settings,
        ls_range=list(LS_RANGE),
        eta_range=list(ETA_RANGE),
        pp_decomp_version=__version__,
        relative_rmse_improvement=relative_improvement(ds),
    )
    return ds


def relative_improvement(ds: xr.Dataset) -> float:
    """``1 - mean(rmse_decomposed) / mean(rmse_entire)`` over trials and sizes."""
    return float(1.0 - ds["rmse_decomposed"].mean() / ds["rmse_entire"].mean())


def plot_regression(ds: xr.Dataset, path) -> None:
    """Mean RMSE and mean posterior sd against training size, with standard-error bands."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    n = ds["n_samples"].values
    k = ds.sizes["trial"]
    for ax, stem, label in ((axes[0], "rmse", "RMSE"), (axes[1], "mean_sd", "mean posterior sd")):
        for which, color in (("entire", "tab:red"), ("decomposed", "tab:blue")):
            da = ds[f"{stem}_{which}"]
            m, se = da.mean("trial").values, da.std("trial").values / np.sqrt(k)
            ax.plot(n, m, color=color, label=f"{which} GP")
            ax.fill_between(n, m - se, m + se, color=color, alpha=0.2)
        ax.set_xlabel("training samples n")
        ax.set_ylabel(label)
        ax.legend()
    a = ds.attrs
    where = f"{a['problem']} (d={a['input_dim']}): " if "problem" in a else ""
    fig.suptitle(
        f"{where}{a['kernel']} kernel, J={a['n_components']}, {k} trials, "
        f"inference={a['inference']}: "
        f"decomposed RMSE {100 * a['relative_rmse_improvement']:.1f}% lower"
    )
    fig.savefig(path, dpi=120)
    plt.close(fig)
