"""Every shipped problem: shapes, composition, optimality of the stated optimum, provenance."""

import numpy as np
import pytest

from pp_decomp.models import PROBLEMS, get_problem
from pp_decomp.space import Box, CandidateSet


@pytest.fixture(scope="module", params=sorted(PROBLEMS))
def problem(request):
    return get_problem(request.param, seed=0)


def test_components_shape_and_composition(problem):
    X = problem.domain.sample(16, seed=1)
    F = problem.components(X)
    assert F.shape == (16, problem.n_components)
    assert np.all(np.isfinite(F))
    np.testing.assert_allclose(problem.objective(X), problem.compose(F, X))
    if problem.linear is not None:
        np.testing.assert_allclose(problem.objective(X), problem.linear.combine(F, X))


def test_optimum_is_optimal_on_a_dense_check(problem):
    dom = problem.domain
    X = dom.X if isinstance(dom, CandidateSet) else dom.sample(4096, seed=2)
    f = problem.objective(X)
    if problem.maximize:
        assert f.max() <= problem.optimum + 1e-9
    else:
        assert f.min() >= problem.optimum - 1e-9
    if isinstance(dom, CandidateSet):  # exact optimum: attained by a candidate
        best = f.max() if problem.maximize else f.min()
        assert best == pytest.approx(problem.optimum, abs=1e-12)


def test_samples_respect_constraints(problem):
    X = problem.domain.sample(256, seed=3)
    assert np.all(problem.domain.contains(X))
    if isinstance(problem.domain, Box) and problem.domain.A is not None:
        assert np.all(X @ problem.domain.A.T <= problem.domain.b + 1e-12)


def test_provenance_present(problem):
    assert problem.description
    assert problem.metadata.get("source")


def test_flu_reads_real_contacts_and_optimum_attained():
    from pp_decomp.models.flu import load_contact_data, optimum, simulate

    N, C = load_contact_data()
    assert N.sum() == pytest.approx(3.35e8, rel=0.05)  # US population 2020 (UN WPP)
    assert np.all(C > 0) and C[0, 0] == C.max()  # children mix most with children
    opt = optimum()
    x = np.asarray(opt["x"])
    assert simulate(x[None]).sum() == pytest.approx(opt["value"], rel=1e-9)
    flu = get_problem("flu")
    assert flu.domain.contains(x[None])[0]


def test_perceived_temperature_formulas():
    from pp_decomp.models.perceived_temperature import apparent_steadman, perceived_nws

    # NWS tables: 90 °F at 60% RH feels like 100 °F; 0 °F at 15 mph feels like -19 °F
    hot = perceived_nws(np.array([(90 - 32) * 5 / 9, 60.0, 0.0]))
    assert (hot * 9 / 5 + 32) == pytest.approx(100.0, abs=1.0)
    cold = perceived_nws(np.array([(0 - 32) * 5 / 9, 50.0, 15 / 2.236936]))
    assert (cold * 9 / 5 + 32) == pytest.approx(-19.0, abs=0.5)
    mild = perceived_nws(np.array([20.0, 50.0, 5.0]))
    assert mild == pytest.approx(20.0)
    # Steadman: 25 °C, 50% RH, calm -> about 25.6 °C
    assert apparent_steadman(np.array([25.0, 50.0, 0.0])) == pytest.approx(26.2, abs=0.2)


def test_perceived_temperature_split():
    from pp_decomp.models.perceived_temperature import perceived_temperature

    run = perceived_temperature(seed=1, split="run")
    assert run.domain.size + len(run.metadata["learn_X"]) == 836
    assert run.metadata["learn_Y"].shape[1] == 3


def test_warm_season_day_is_warm_and_shipped():
    from pp_decomp.models.perceived_temperature import load_stations, perceived_temperature

    st = load_stations("2019-07-15")
    assert len(st["station"]) == 1494
    assert np.mean(st["temp_c"] * 9 / 5 + 32 >= 80) > 0.7  # the heat index applies
    problem = perceived_temperature(day="2019-07-15")
    g = problem.compose(problem.components(problem.domain.X), problem.domain.X)
    assert np.mean(np.abs(g - st["temp_c"]) > 0.5) > 0.6
    assert problem.name == "perceived-temperature-july" and problem.metadata["day"] == "2019-07-15"
    with pytest.raises(ValueError, match="day"):
        perceived_temperature(day="1995-07-15")


@pytest.mark.parametrize("day", ["1995-03-18", "2019-07-15"])
def test_dewpoint_and_relative_humidity_compose_to_the_same_objective(day):
    from pp_decomp.models.perceived_temperature import perceived_temperature

    dew = perceived_temperature(day=day)
    rh = perceived_temperature(day=day, humidity="rh")
    assert (
        dew.component_names[1] == "dewpoint_c" and rh.component_names[1] == "relative_humidity_pct"
    )
    X = dew.domain.X
    g_dew = dew.compose(dew.components(X), X)
    g_rh = rh.compose(rh.components(X), X)
    # the shipped RH is the Magnus formula of the same readings, rounded to 0.01%
    np.testing.assert_allclose(g_dew, g_rh, atol=0.02)
    assert dew.optimum == pytest.approx(rh.optimum, abs=0.02)


def test_metar_reports_parse_with_tenths_and_both_wind_units():
    from pp_decomp.models.metar_build import parse_report

    sid, minutes, t, d, w = parse_report(
        "KIPL 142356Z AUTO 13010KT 10SM CLR 43/06 A2981 RMK AO2 T04330061"
    )
    assert (sid, minutes, t, d) == ("KIPL", -4, 43.3, 6.1)
    assert w == pytest.approx(10 * 0.514444)
    cold = parse_report("KXYZ 150012Z VRB03MPS 10SM M02/M05 RMK T10171050")
    assert cold[1:] == (12, -1.7, -5.0, 3.0)
    assert parse_report("KXYZ 150012Z 18005KT 10SM 20/10 A3000") is None  # no tenths group


def test_classic_optima_match_literature():
    assert get_problem("branin").optimum == pytest.approx(-0.397887, abs=1e-6)
    assert get_problem("goldstein-price").optimum == pytest.approx(-3.0, abs=1e-9)
    him = get_problem("himmelblau")
    # the tilt 0.5x makes the peak near (-3.78, -3.28) the global one
    assert him.objective(np.array([[-3.78, -3.28]]))[0] == pytest.approx(him.optimum, abs=0.01)


@pytest.mark.parametrize(
    "name, variant", [("kandasamy-24-6-4", "reference"), ("kandasamy-narrow-24-6-4", "narrow")]
)
def test_kandasamy_optimum_attained_at_the_heavy_mode(name, variant):
    from pp_decomp.models.additive import centres

    p = get_problem(name, seed=1)
    groups = np.array(p.metadata["groups"])
    assert groups.shape == (4, 6) and len(np.unique(groups)) == 24
    x = np.zeros((1, 24))
    for g in groups:
        x[0, g] = centres(6, variant)[1]  # the 0.8-weight mode in every group
    assert p.domain.contains(x).all()
    assert p.objective(x)[0] == pytest.approx(p.optimum, rel=1e-12)
    x2 = x.copy()
    x2[0, groups[0, 0]] += 0.3 if variant == "narrow" else -0.3  # leave the mode in one coordinate
    assert p.objective(x2)[0] < p.optimum - 1.0
    light = x.copy()
    light[0, groups[0]] = centres(6, variant)[0]  # one group at a 0.1-weight mode
    assert p.objective(light)[0] == pytest.approx(p.optimum - np.log(8), abs=1e-6)


def test_kandasamy_reference_is_clipped_like_the_authors_code():
    from pp_decomp.models.additive import trimodal

    p = get_problem("kandasamy-10-3-3", seed=0)
    assert np.allclose(p.domain.lower, -1) and np.allclose(p.domain.upper, 1)
    far = np.where(np.arange(18) % 2, -1.0, 1.0)[None]  # far from every mode: below -700
    assert trimodal(far)[0] == -700.0
    assert trimodal(far, "narrow")[0] < -700.0


@pytest.mark.parametrize("graph", ["star", "grid"])
def test_rolland_dynamic_programme_matches_brute_force(graph):
    import itertools

    from pp_decomp.models.graphs import (
        PairFunctions,
        _ladder_grid_optimum,
        _star_grid_optimum,
        grid_edges,
        star_edges,
    )

    D, L = 4, 7
    edges = star_edges(D) if graph == "star" else grid_edges(D)
    funcs = PairFunctions(edges, 0.3, 50, np.random.default_rng(0))
    levels = np.linspace(0, 1, L)
    solver = _star_grid_optimum if graph == "star" else _ladder_grid_optimum
    x, v = solver(funcs, D, levels)
    allx = np.array(list(itertools.product(levels, repeat=D)))
    brute = funcs(allx).sum(1)
    assert v == pytest.approx(brute.max(), abs=1e-10)
    assert funcs(x[None]).sum() == pytest.approx(brute.max(), abs=1e-10)


def test_tuberculosis_fragmentation_is_exact():
    from pp_decomp.models.tuberculosis import TBModel

    model = TBModel()
    for v in (np.zeros(4), np.full(4, 0.3), np.array([0.0, 0.6, 0.6, 0.0])):
        U, total = model.simulate(v)
        w = model.weights(v)
        assert w[0] + w[1:] @ U.ravel() == pytest.approx(total, rel=1e-12)
    # case finding reduces the burden
    assert model.simulate(np.full(4, 0.3))[1] < model.simulate(np.zeros(4))[1]


def test_single_year_ages_keep_every_five_year_bin_and_every_contact_row():
    import starsim_data

    from pp_decomp.models.demography import SINGLE_AGES, single_year_data

    N, C = single_year_data("IND", 2020)
    assert N.shape == (SINGLE_AGES,) and C.shape == (SINGLE_AGES, SINGLE_AGES)
    assert np.all(N > 0) and np.all(C >= 0)
    pop = starsim_data.load("IND", which="population")
    pop = pop[pop["Time"] == 2020].groupby("AgeGrp")["Value"].sum()
    for start in range(0, 100, 5):  # each five-year bin's total is kept
        assert N[start : start + 5].sum() == pytest.approx(pop.loc[start], rel=1e-10)
    assert N[100:].sum() == pytest.approx(pop.loc[100], rel=1e-10)
    prem = np.asarray(starsim_data.load("IND", which="prem", kind="all"), dtype=float)
    bins = np.minimum(np.arange(SINGLE_AGES) // 5, 15)
    for a in (0, 37, 80, 109):  # each age keeps its bin's contacts with every bin
        per_bin = np.bincount(bins, weights=C[a], minlength=16)
        np.testing.assert_allclose(per_bin, prem[bins[a]], rtol=1e-12)


def test_tuberculosis_110_yearly_fragmentation_is_exact():
    from pp_decomp.models import get_problem
    from pp_decomp.models.tuberculosis import TB110, AgeStructure, TBModel

    model = TBModel(TB110, AgeStructure.single_years())
    rng = np.random.default_rng(0)
    for v in (np.zeros(110), np.full(110, 0.3), rng.uniform(0, 0.3, 110)):
        F, s, w0 = model.yearly(v)
        assert F.shape == s.shape == (23,) and np.all(s > 0) and w0 > 0
        assert w0 + F @ s == pytest.approx(model.simulate(v)[1], rel=1e-12)
    p = get_problem("tuberculosis-110")
    assert (p.dim, p.n_components, p.maximize) == (110, 23, False)
    X = p.domain.sample(3, seed=1)
    np.testing.assert_allclose(p.compose(p.evaluate(X), X), p.objective(X), rtol=1e-12)
    assert np.all(p.objective(X) >= p.optimum)  # the stored optimum is not beaten
    assert p.objective(np.array(p.metadata["argmin"])[None])[0] == pytest.approx(p.optimum)
    # case finding at the budget reduces the burden
    assert model.simulate(np.full(110, 0.3))[1] < model.simulate(np.zeros(110))[1]


def test_flu_equity_judges_a_policy_by_its_worst_off_group():
    from pp_decomp.models import get_problem

    p, flu = get_problem("flu-equity"), get_problem("flu")
    X = p.domain.sample(4, seed=2)
    F = p.evaluate(X)
    np.testing.assert_allclose(F, flu.evaluate(X), rtol=1e-12)  # the same system
    share = np.asarray(p.metadata["population"]) / np.sum(p.metadata["population"])
    worst = np.max(F / share, axis=1)
    g = p.compose(F, X)  # the smooth maximum: within τ log 5 above the plain one
    assert np.all(g >= worst) and np.all(g <= worst + p.metadata["tau"] * np.log(5) + 1e-12)
    assert np.all(p.objective(X) >= p.optimum)
    assert p.objective(np.array(p.metadata["argmin"])[None])[0] == pytest.approx(p.optimum)


@pytest.mark.parametrize("ages", ["groups", "single_years"])
def test_tuberculosis_weights_of_many_policies_at_once_equal_one_at_a_time(ages):
    from pp_decomp.models.tuberculosis import TB110, AgeStructure, TBModel, TBParameters

    params = TBParameters() if ages == "groups" else TB110
    model = TBModel(params, getattr(AgeStructure, ages)())
    V = np.random.default_rng(3).uniform(0, params.v_max, (5, model.n))
    one_by_one = np.stack([model.weights(v) for v in V])
    np.testing.assert_allclose(model.weights_batch(V), one_by_one, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match=rf"policies must have {model.n} columns"):
        model.yearly_weights_grad(V[:, 1:])  # compiled: a narrower row would be read past


def test_polishing_tuberculosis_110_policies_never_ends_above_them():
    from dataclasses import replace

    from pp_decomp.models.tuberculosis import TB110, AgeStructure, TBModel, polish_110

    params = replace(TB110, years=4, budget=3 * TB110.v_max)  # a short horizon, 3 ages
    model = TBModel(params, AgeStructure.single_years())
    first = np.zeros(110)
    first[[20, 40, 60]] = TB110.v_max
    less = 0.5 * first  # the same ages, half as much found
    best = polish_110(np.stack([less, first]), params)
    assert best["value"] <= min(model.simulate(first)[1], model.simulate(less)[1])
    assert model.simulate(np.asarray(best["x"]))[1] == pytest.approx(best["value"], rel=1e-12)
    assert np.sum(best["x"]) <= params.budget + 1e-9
    with pytest.raises(ValueError, match="policies"):
        polish_110(np.zeros((1, 5)), params)
    with pytest.raises(ValueError, match=r"policies\[0\] is outside"):
        polish_110(np.full((1, 110), TB110.v_max), params)
    with pytest.raises(ValueError, match=r"policies\[1\] is outside"):  # before any search
        polish_110(np.stack([first, -first]), params)
    with pytest.raises(ValueError, match="policies must be finite"):
        polish_110(np.full((1, 110), np.nan), params)


def test_the_rates_problem_is_positive_skewed_and_spans_orders_of_magnitude():
    """The positive problem written for issue 66: each seed its own fields, the stated
    optimum above a dense check, the shipped name and the module's factory alike."""
    from pp_decomp.models.rates import fields, rates, rates_parameters

    a, b = rates(seed=0), get_problem("rates", seed=1)
    assert get_problem("pp_decomp.models.rates:rates", seed=1).optimum == b.optimum
    assert a.optimum != b.optimum
    X = a.domain.sample(4096, seed=2)
    assert a.objective(X).max() <= a.optimum + 1e-9
    F = fields(X, rates_parameters(0))
    assert np.all(F > 0)
    throughput, impurity = F[:, 0], F[:, 1]
    assert throughput.max() / throughput.min() > 100  # orders of magnitude
    assert np.mean(throughput) > 1.5 * np.median(throughput)  # skewed right
    assert impurity.max() / np.median(impurity) > 10  # a spike on a floor
    np.testing.assert_allclose(a.components(X[:5]), F[:5])


def test_the_front_field_is_steep_at_its_front_and_flat_away_from_it():
    """The non-stationary field written for issue 66: each seed its own front and plume,
    the stated optimum above a dense check."""
    from pp_decomp.models.front import fields, front, front_parameters

    a, b = front(seed=0), get_problem("front", seed=1)
    assert front_parameters(0) != front_parameters(1) and a.optimum != b.optimum
    X = a.domain.sample(4096, seed=2)
    assert a.objective(X).max() <= a.optimum + 1e-9
    p = front_parameters(0)
    normal = np.array([np.cos(p["theta"]), np.sin(p["theta"])])
    on = 0.5 + (p["offset"] - 0.5) * normal  # a point on the front line
    steps = np.array([[-0.3], [-0.01], [0.01], [0.3]]) * normal + on
    F = fields(steps, p)[:, 0]
    assert F[2] - F[1] > 0.3 and abs(F[3] - 1.0) < 1e-6 and abs(F[0] + 1.0) < 1e-6
