"""The papers' benchmarks by name: plain data, importable without numpy, so that
the command line's parser lists them (:func:`pp_decomp.apps.bench.spec.preset` builds
a :class:`~pp_decomp.apps.bench.spec.BenchSpec` of one)."""

PRESETS = {
    "wang2019": dict(
        problems=["synthetic", "flu", "perceived-temperature"],
        strategies=[
            "d-gpucb",
            "d-gpucb-lipschitz",
            "d-gpucb-mc",
            "gp-ucb",
            "ei",
            "pi",
            "gp-mi",
            "random",
        ],
        trials=30,
        iterations=100,
        n_init=5,
    ),
    # the paper's protocol: finite search sets, kernels known beforehand (the
    # generated GPs' own, else SE fitted on half the set), 10 initial points, δ = 1e-6
    "contal2014": dict(
        problems=[
            "gp-sample-2d",
            "gp-sample-4d",
            "gaussian-mixture-known",
            "himmelblau-known",
            "branin-known",
            "goldstein-price-known",
            "mackey-glass-known",
        ],
        strategies=["gp-mi", "gp-ucb", "ei"],
        trials=30,
        iterations=100,
        n_init=10,
        inference="fixed",
        beta_schedule="contal",
        baseline="gp-mi",
        compared=["gp-ucb", "ei"],
    ),
    # the paper's erratum: on a GP sample of uncorrelated sites, told the true kernel,
    # GP-MI stops exploring and its average regret R_T / T stays above zero
    "contal2014-erratum": dict(
        problems=["independent-sites"],
        strategies=["gp-mi", "gp-ucb"],
        trials=30,
        iterations=400,
        n_init=2,
        inference="fixed",
        beta_schedule="contal",
        baseline="gp-mi",
        compared=["gp-ucb"],
    ),
    "kandasamy2015": dict(
        problems=["kandasamy-24-6-4"],
        strategies=["add-gp-ucb-oracle", "add-gp-ucb", "gp-ucb", "random"],
        trials=10,
        iterations=200,
        n_init=10,
        beta_schedule="kandasamy",
        # the paper's search over decompositions: the best of random partitions
        additive={"n_cyc": 25, "max_group_size": 6, "decomposition_search": "random"},
        compared=["add-gp-ucb", "add-gp-ucb-oracle"],
    ),
    "rolland2018": dict(
        problems=["rolland-star", "rolland-grid"],
        strategies=["g-add-gp-ucb", "g-add-gp-ucb-disjoint", "g-add-gp-ucb-oracle", "random"],
        trials=10,
        iterations=300,
        n_init=10,
        additive={"n_cyc": 30, "gibbs_evals": 200},
        baseline="g-add-gp-ucb-disjoint",
        compared=["g-add-gp-ucb", "g-add-gp-ucb-oracle"],
    ),
    # decision quality side by side with BoTorch's MAP composite loop (compare extra)
    "peers": dict(
        problems=["synthetic", "flu"],
        strategies=["d-gpucb", "d-gpucb-mc", "botorch-composite"],
        trials=10,
        iterations=100,
        n_init=5,
        baseline="botorch-composite",
        compared=["d-gpucb", "d-gpucb-mc"],
    ),
}
QUICK = {"trials": 2, "iterations": 20}
PRESET_NAMES = tuple(PRESETS)
