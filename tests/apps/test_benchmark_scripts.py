"""Every script under benchmarks/ runs at tiny sizes and prints (or writes) its figures.

Each test runs one script in this process (``runpy``, as ``python SCRIPT ARGS`` would,
without a fresh Python and PyMC import per script) at sizes of a few seconds, and
checks what it reports: a line or table row of the right shape with finite numbers,
a JSON file's fields, or an invariant of the figures (a hill-climb never scores below
its start, blocks give the values one block gives). The reports read small benchmark
folders made once per module. ``speed/scale.py`` and ``speed/checkpoint_cost.py`` are
run by ``tests/apps/test_scale_benchmark.py``. The last tests check that every script
is run by some test and named in ``benchmarks/README.md``.
"""

from __future__ import annotations

import inspect
import json
import re
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan"

# the script each test of this module runs; the scripts another module runs
SMOKE_TESTS = {
    "speed/additive_nuts_speed.py": "test_additive_nuts_speed",
    "speed/ask_latency.py": "test_ask_latency",
    "speed/correlated_map_time.py": "test_correlated_map_time",
    "speed/criticism_cost.py": "test_criticism_cost",
    "speed/fast_settings_time.py": "test_fast_settings_time",
    "speed/gradient_ab.py": "test_gradient_ab",
    "speed/from_pymc_speed.py": "test_from_pymc_speed",
    "speed/loop_overhead.py": "test_loop_overhead",
    "speed/map_objective_speed.py": "test_map_objective_speed",
    "speed/node_model_asks.py": "test_node_model_asks",
    "speed/sqdist_speed.py": "test_sqdist_speed",
    "speed/triangular_speed.py": "test_triangular_speed",
    "speed/likelihood_speed.py": "test_likelihood_speed",
    "reports/tb_optimum.py": "test_tb_optimum",
    "reports/average_regret.py": "test_average_regret",
    "speed/maxsum_time.py": "test_maxsum_time",
    "speed/mc_blocks_ab.py": "test_mc_blocks_ab",
    "speed/mc_step_cost.py": "test_mc_step_cost",
    "speed/nuts_density_speed.py": "test_nuts_density_speed",
    "speed/nuts_fit_time.py": "test_nuts_fit_time",
    "speed/nuts_route_speed.py": "test_nuts_route_speed",
    "speed/problem_eval_time.py": "test_problem_eval_time",
    "speed/refit_routes.py": "test_refit_routes",
    "speed/tb_ask.py": "test_tb_ask",
    "speed/warped_fast_path.py": "test_warped_fast_path",
    "studies/async_gain.py": "test_async_gain",
    "studies/box_beta.py": "test_box_beta",
    "studies/fast_convergence.py": "test_fast_convergence",
    "studies/fast_vs_straightforward_regret.py": "test_fast_vs_straightforward_regret",
    "studies/importance_coverage.py": "test_importance_coverage",
    "studies/inducing_points.py": "test_inducing_points",
    "studies/loo_choice.py": "test_loo_choice",
    "studies/output_warp_coverage.py": "test_output_warp_coverage",
    "studies/warped_recovery.py": "test_warped_recovery",
    "studies/nuts_convergence.py": "test_nuts_convergence",
    "studies/perceived_diagnosis.py": "test_perceived_diagnosis",
    "studies/prior_sweep.py": "test_prior_sweep",
    "studies/run_posterior.py": "test_run_posterior",
    "studies/search_budget.py": "test_search_budget",
    "studies/partial_saving.py": "test_partial_saving",
    "reports/ask_walk.py": "test_ask_walk",
    "reports/decomposition_identifiability.py": "test_decomposition_identifiability",
    "reports/paired_compare.py": "test_paired_compare",
    "reports/ask_times.py": "test_ask_times",
    "reports/peer_models.py": "test_peer_models",
    "reports/refit_report.py": "test_refit_report",
    "reports/structure_recovery.py": "test_structure_recovery",
}
ELSEWHERE = {
    "speed/scale.py": "apps/test_scale_benchmark.py",
    "speed/checkpoint_cost.py": "apps/test_scale_benchmark.py",
}


@pytest.fixture
def script(monkeypatch, capsys):
    """``python benchmarks/SCRIPT ARGS`` in this process, e.g. ``script("speed/x.py --n 5",
    tmp_path / "out.json")`` (strings split at spaces, paths kept whole); returns its
    standard output."""

    def run(*parts) -> str:
        args = [w for p in parts for w in (p.split() if isinstance(p, str) else [str(p)])]
        path = BENCHMARKS / args[0]
        monkeypatch.setattr(sys, "argv", [str(path), *args[1:]])
        monkeypatch.setattr(sys, "path", list(sys.path))  # a script may put its tree first
        runpy.run_path(str(path), run_name="__main__")
        return capsys.readouterr().out

    return run


def numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(NUM, text)]


def match(pattern: str, out: str) -> list[float]:
    """The numbers of the one line of ``out`` that ``pattern`` (numbers as ``{n}``)
    matches in full, all finite."""
    rx = re.compile(pattern.replace("{n}", f"({NUM})"))
    hits = [m for line in out.splitlines() if (m := rx.fullmatch(line.strip()))]
    assert len(hits) == 1, f"{pattern!r}: {len(hits)} lines match in\n{out}"
    values = [float(v) for v in hits[0].groups()]
    assert np.all(np.isfinite(values)), hits[0].group(0)
    return values


def matches(pattern: str, out: str) -> list[list[float]]:
    rx = re.compile(pattern.replace("{n}", f"({NUM})"))
    return [
        [float(v) for v in m.groups()]
        for line in out.splitlines()
        if (m := rx.fullmatch(line.strip()))
    ]


# ------------------------------------------------------------------ benchmark folders
def make_bench(tmp_path_factory, name: str, **spec) -> Path:
    """A ``pp-decomp bench`` folder (``runs/`` and ``bench.nc``; no summary or plot), its
    runs made one after another in this process rather than in a pool."""
    from pp_decomp.apps.bench import BenchSpec, combine, run_task

    out = tmp_path_factory.mktemp(name)
    spec = BenchSpec(**spec)
    for task in spec.tasks():
        run_task(task, out)
    combine(spec, out).to_netcdf(out / "bench.nc")
    return out


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    """``pp-decomp bench --problems synthetic --strategies d-gpucb,gp-ucb --trials 2
    --iterations 7`` (MAP, 5 initial points, root seed 0)."""
    return make_bench(
        tmp_path_factory, "bench", problems=["synthetic"], strategies=["d-gpucb", "gp-ucb"],
        trials=2, iterations=7,
    )  # fmt: skip


@pytest.fixture(scope="module")
def peer_bench(tmp_path_factory) -> Path:
    """One short ``botorch-composite`` run on synthetic."""
    pytest.importorskip("botorch")
    return make_bench(
        tmp_path_factory, "peers", problems=["synthetic"], strategies=["botorch-composite"],
        trials=1, iterations=6,
    )  # fmt: skip


@pytest.fixture(scope="module")
def additive_bench(tmp_path_factory) -> Path:
    """``add-gp-ucb`` on rolland-star (true edges) and kandasamy-10-3-3 (true groups),
    the structure relearnt every 2 steps."""
    return make_bench(
        tmp_path_factory, "additive", problems=["rolland-star", "kandasamy-10-3-3"],
        strategies=["add-gp-ucb"], trials=1, iterations=8, additive={"n_cyc": 2},
    )  # fmt: skip


def final(bench_dir: Path, var: str, strategy: str, iteration: int = -1) -> np.ndarray:
    with xr.open_dataset(bench_dir / "bench.nc") as ds:
        return ds[var].sel(problem="synthetic", strategy=strategy).isel(iteration=iteration).values


# ------------------------------------------------------------------------------ speed
@pytest.mark.slow
def test_additive_nuts_speed(script):
    out = script("speed/additive_nuts_speed.py --n 30 --draws 20 --tune 20")
    for kind in ("numba density", "PyMC model"):
        assert match(rf"build: {kind} {{n}} s", out)[0] >= 0
        secs, attempts, ess, rhat, *means = match(
            rf"n=  30 {kind} +{{n}} s  attempts {{n}}  ess_bulk +{{n}}  rhat {{n}}  "
            r"E log sigma {n}  E log ls0 {n}",
            out,
        )
        assert secs > 0 and attempts >= 1 and ess > 0 and rhat > 0.9
    assert match(r"n=  30 PyMC model / numba density: {n}x", out)[0] > 0


def test_ask_latency(script, tmp_path):
    out = script("speed/ask_latency.py --eval-seconds 0 --steps 9 --out", tmp_path / "ask.json")
    (r,) = json.loads((tmp_path / "ask.json").read_text())
    assert r["steps"] == 9 and r["steps_scored"] == 9 - 5 - 1  # after the first fit
    assert 0 < r["ask_p50"] <= r["ask_p95"] <= r["ask_max"]
    construct, first, p50, p95, mx, at, line, over, scored = match(
        r"evaluation 0 s: construct {n} s, first ask {n} s, ask p50 {n} s, p95 {n} s, max {n} s "
        r"\(evaluation {n}; line 2 × p50 \+ 1 = {n} s\), {n} of {n} model steps over 1 s",
        out,
    )
    assert scored == 3 and 0 <= over <= 3 and p50 <= mx and construct >= 0  # ~0 once imported
    assert first == pytest.approx(r["first_ask"], abs=1e-3) and first > 0
    assert 7 <= at <= 9 and line == pytest.approx(2 * p50 + 1, abs=2e-3)


def test_criticism_cost(script):
    # the two checkouts it compares: this tree on both sides
    out = script("speed/criticism_cost.py", ROOT, "--case flu --steps 7")
    line = json.loads(out.strip().splitlines()[-1])
    assert line["tree"] == str(ROOT) and line["case"] == "flu"
    assert line["seconds"] > 0 and line["p50"] > 0 and np.isfinite(line["regret"])


def test_fast_settings_time(script, tmp_path):
    out = script(
        "speed/fast_settings_time.py --field ess_collapse --values 0,0.15",
        "--cases flu --reps 1 --steps 7 --out",
        tmp_path / "f.json",
    )
    report = json.loads((tmp_path / "f.json").read_text())
    for value in ("0.0", "0.15"):
        (r,) = report["flu"][value]
        assert r["seconds"] > 0 and np.isfinite(r["cumulative_regret"])
        assert r["refits"] >= 5  # every component's first fit, at least
    assert match(r"flu ess_collapse=0.0: median {n} s, {n}x 0.0's", out)[1] == 1.0
    assert match(r"flu ess_collapse=0.15: median {n} s, {n}x 0.0's", out)[1] > 0


@pytest.mark.slow
def test_from_pymc_speed(script):
    out = script("speed/from_pymc_speed.py --n 10 --refits 1")
    for path in ("from_pymc", "kernels"):
        first, med, refit = match(
            rf"n=  10 {path} +first fit \(build\+compile\) +{{n}} s +refit median +{{n}} s +"
            r"\({n}\)",
            out,
        )
        assert first > 0 and med == refit > 0
    assert match(r"n=  10 from_pymc / kernels per refit: {n}x", out)[0] > 0


def test_node_model_asks(script):
    out = script("speed/node_model_asks.py --evaluations 8")
    for arm in ("default", "expression", "from_pymc"):
        first, median, largest, asks = match(
            rf"{arm} +first ask +{{n}} s +later asks median +{{n}} s +max +{{n}} s +"
            r"\({n} asks\) +choices [0-9a-f]{12}",
            out,
        )
        assert first > 0 and 0 < median <= largest and asks == 2
        ratio = match(rf"{arm} +/ default later-ask median: {{n}}x", out)[0]
        assert ratio > 0 and (arm != "default" or ratio == 1.0)


def test_loop_overhead(script):
    out = script("speed/loop_overhead.py --steps 6 --map-steps 6")
    for label in ("d-gpucb fixed", "d-gpucb map", "gp-ucb map"):
        steps, secs, regret = match(rf"{label}: {{n}} steps, {{n}} s, cumulative regret {{n}}", out)
        assert steps == 6 and secs > 0 and regret >= 0


def test_map_objective_speed(script):
    out = script("speed/map_objective_speed.py --n 20,60 --calls 5")
    assert out.startswith("n | numpy ms/call | compiled PyMC ms/call | compiled / numpy")
    for n in (20, 60):
        fast, slow, ratio = match(rf"{n} \| {{n}} \| {{n}} \| {{n}}", out)
        assert fast > 0 and slow > 0 and ratio == pytest.approx(slow / fast, rel=0.1, abs=0.01)


def test_sqdist_speed(script):
    out = script("speed/sqdist_speed.py --cases 16x8x3x1,4x5x2x6 --calls 2")
    assert out.startswith("n1 x n2 x d x S | per draw ms | batched ms")
    for case in ("16x8x3x1", "4x5x2x6"):
        t_draw, t_batch, ratio, diff = match(rf"{case} \| {{n}} \| {{n}} \| {{n}} \| {{n}}", out)
        assert t_draw > 0 and t_batch > 0 and diff < 1e-12


def test_likelihood_speed(script):
    out = script("speed/likelihood_speed.py --cases 40x3,7x12 --calls 2")
    assert out.startswith("S x n | numpy ms | compiled ms")
    for case in ("40x3", "7x12"):
        t_np, t_c, ratio, diff = match(rf"{case} \| {{n}} \| {{n}} \| {{n}} \| {{n}}", out)
        assert t_np > 0 and t_c > 0 and diff < 1e-9


def test_triangular_speed(script):
    out = script("speed/triangular_speed.py --cases 12x3x1,20x2x4 --calls 2")
    assert out.startswith("n x S x m | matmul ms | triangular ms")
    for case in ("12x3x1", "20x2x4"):
        t_mat, t_tri, ratio, diff = match(rf"{case} \| {{n}} \| {{n}} \| {{n}} \| {{n}}", out)
        assert t_mat > 0 and t_tri > 0 and diff < 1e-12


def test_refit_routes(script):
    out = script("speed/refit_routes.py --T 40 --new 6 --J 2 --routes refresh-grow,mode,nuts")
    grow = match(r"T=40 \+ 6 refresh-grow +{n} s  passed=True  ESS {n}  k {n}", out)
    mode = match(r"T=40 \+ 6 mode +{n} s  passed=True  ESS {n}  k {n}", out)
    assert grow[0] > 0 and mode[0] > 0 and grow[1] >= 400 and mode[1] >= 400
    assert grow[2] <= 0.7 and mode[2] <= 0.7
    assert re.search(r"T=40 \+ 6 nuts +[\d.]+ s  passed=(True|False)  ESS nan  k nan", out)
    with pytest.raises(ValueError, match="routes: unknown \\['bfgs'\\]"):
        script("speed/refit_routes.py --T 20 --new 2 --routes bfgs")


def test_warped_fast_path(script):
    out = script("speed/warped_fast_path.py --iterations 6 --pairs 1")
    fast = match(r"fast path: {n} s wall, {n} s CPU, peak so far {n} GB", out)
    nuts = match(r"NUTS at every refit: {n} s wall, {n} s CPU, peak so far {n} GB", out)
    assert min(fast + nuts) > 0
    ratio = match(r"ratio fast / NUTS: {n}", out)[0]
    # the printed walls are rounded to 0.1 s, the ratio to 0.01
    assert (fast[0] - 0.05) / (nuts[0] + 0.05) - 0.005 <= ratio
    assert ratio <= (fast[0] + 0.05) / (nuts[0] - 0.05) + 0.005
    assert re.search(r"throughput: \{'(chains|reweighted chains|prior importance)", out)


def test_maxsum_time(script):
    out = script("speed/maxsum_time.py --D 4 --levels 5 --repeats 2 --n 10")
    assert match(r"max-sum, chain of 4 variables x 5 levels: median {n} ms over 2", out)[0] > 0
    values = match(
        r"G-Add-GP-UCB acquisition maximisation \(tables from 3 group posteriors, "
        r"n = 10\): median {n} s over 2",
        out,
    )
    assert values[0] >= 0


def test_mc_blocks_ab(monkeypatch, script):
    from pp_decomp.acquisition import ucb

    monkeypatch.setattr(ucb, "MC_BLOCK_BYTES", ucb.MC_BLOCK_BYTES)  # restored after
    out = script("speed/mc_blocks_ab.py --steps 6 --reps 1")
    one, blocks, ratio = match(
        r"perceived-temperature-july, 1494 candidates, d-ei after 6 evaluations: "
        r"one block {n} ms, blocks {n} ms \(x {n}\), same values: True",
        out,
    )
    assert one > 0 and blocks > 0


def test_mc_step_cost(script):
    out = script("speed/mc_step_cost.py --iterations 7 --reps 1 --strategies gp-ucb,d-gpucb-mc")
    assert "perceived-temperature, 7 evaluations, 1 repetitions, MAP" in out
    rows = {}
    for name in ("gp-ucb", "d-gpucb-mc"):
        rows[name] = match(
            rf"{name} +ask +{{n}} ms \(fit +{{n}}, acquisition +{{n}}\)  x gp-ucb +{{n}}", out
        )
        ask, fit, rest, _ = rows[name]
        assert ask > 0 and fit > 0
    assert rows["gp-ucb"][3] == 1.0 and rows["d-gpucb-mc"][3] > 0


@pytest.mark.slow
def test_nuts_density_speed(script):
    out = script("speed/nuts_density_speed.py --dims 1 --n 10")
    assert all(v >= 0 for v in match(r"d=1: build {n} s \(PyMC\) against {n} s \(density\)", out))
    t_pymc, t_ours, ratio, m_pymc, m_ours = match(
        r"d=1 n=  10: PyMC model +{n} s, density +{n} s, ratio {n}; mean log eta {n} / {n}", out
    )
    assert t_pymc > 0 and t_ours > 0
    assert abs(m_pymc - m_ours) < 0.5  # one posterior, two samplers


def test_nuts_fit_time(script):
    out = script("speed/nuts_fit_time.py --T 10 --D 1 --repeats 1")
    fits = matches(r"fit \d: {n} s  r-hat max {n}  bulk ESS min {n}  divergences {n}", out)
    assert len(fits) == 2 and all(s > 0 and r > 0.9 and e > 0 for s, r, e, _ in fits)
    first, median = match(
        r"T=10 D=1 kernel=se: first fit \(compiles\) {n} s; median refit {n} s over 1", out
    )
    assert median == pytest.approx(fits[1][0], abs=0.01)


def test_partial_saving(script):
    out = script("studies/partial_saving.py --init 4 --evals 2 --seeds 0,1")
    for seed in (0, 1):
        cost, whole, nodes, n_nodes, done, left = match(
            rf"alpine2-network seed {seed}: cost {{n}}; simple regret whole {{n}}, node by node "
            r"{n} \({n} nodes, {n} completed, {n} left open\)",
            out,
        )
        assert cost == 36 and whole >= 0 and nodes >= 0 and done >= 4 and n_nodes >= 26
    diff, se = match(
        r"alpine2-network network-ei \(map\), 2 seeds: simple regret node by node - whole "
        r"{n} ± {n}",
        out,
    )
    assert se >= 0


def test_search_budget(script):
    out = script("studies/search_budget.py --problem tuberculosis --evals 13 --after 11")
    assert "tuberculosis d-gpucb (map), 2 steps:" in out
    rows = {
        name: match(
            rf"{re.escape(name)} +time {{n}}x the default's; its value at {{n}} of 2 steps; "
            r"shortfall {n} ± {n} of the spread \(max {n}\)",
            out,
        )
        for name in ("default", "4 starts", "ftol 1e-4", "4 starts, ftol 1e-4", "50 iterations")
    }
    assert rows["default"][:4] == [1.0, 2, 0.0, 0.0]  # against itself
    assert all(r[0] > 0 and 0 <= r[1] <= 2 for r in rows.values())


def test_gradient_ab(script):
    out = script("speed/gradient_ab.py --problem tuberculosis --evals 13 --after 11")
    rows = matches(
        r"n= *{n} analytic +{n} s value {n} +differences +{n} s value {n} +"
        r"choice moved {n} of a width",
        out,
    )
    assert len(rows) == 2 and all(ta > 0 and tf > 0 for _, ta, _, tf, _, _ in rows)
    ratio, same, steps, moved, gap, se = match(
        r"tuberculosis d-gpucb \(map\): analytic / differences time, median {n}; analytic value >= "
        r"differences' \(to 1e-06 of \|value\|\) at {n} of {n} steps; choices moved up to "
        r"{n} of a width; value gap mean {n} ± {n} \(of the median \|value\|\)",
        out,
    )
    assert steps == 2 and ratio > 0 and 0 <= same <= steps


def test_correlated_map_time(script, tmp_path):
    np.save(tmp_path / "x.npy", np.full((6, 5), -1.0))  # another tree's choices
    choices = f"--choices {tmp_path / 'x.npy'}"
    out = script(f"speed/correlated_map_time.py --problem flu --steps 6 {choices}")
    (same, n, first) = match(
        r"choices against .*x\.npy: {n} of {n} the same; first differs at {n}", out
    )
    assert (same, n, first) == (0, 6, 0)
    rows = [
        match(rf"{label} {{n}} s, ask median {{n}} s, max {{n}} s, regret {{n}}", out)
        for label in ("correlated", "independent")
    ]
    for seconds, median, largest, regret in rows:
        assert 0 < median <= largest < seconds and regret >= 0  # one ask after 5 initial
    (ratio,) = match(r"correlated / independent: {n}x", out)
    # the seconds are printed to 1 decimal: the ratio lies within what their rounding allows
    (c, i) = rows[0][0], rows[1][0]
    assert (c - 0.05) / (i + 0.05) * 0.99 <= ratio <= (c + 0.05) / max(i - 0.05, 1e-9) * 1.01
    assert np.load(tmp_path / "x.npy").shape == (6, 5)  # this run's, kept


def test_tb_ask(script, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((13, 110)))  # another tree's choices
    choices = f"--choices {tmp_path / 'x.npy'}"
    out = script(f"speed/tb_ask.py --evals 13 --after 11 {choices} --out", tmp_path / "tb.json")
    pattern = r"choices against .*x\.npy: 0 of 3 asks within 1e-9, 0 within 1e-4; "
    pattern += r"largest move {n}; best objective {n} here, {n} there"
    moved, best, best_there = match(pattern, out)
    assert moved > 0 and best < best_there  # no case finding at all is the worst policy
    assert np.load(tmp_path / "x.npy").shape == (13, 110)  # this run's, kept
    (dg, dg_max, n1), (gp, gp_max, n2) = (
        match(rf"{s} +ask median {{n}} s, max {{n}} s over {{n}} \(analytic\)", out)
        for s in ("d-gpucb", "gp-ucb")
    )
    assert n1 == n2 == 2 and 0 < dg <= dg_max and 0 < gp <= gp_max
    (ratio,) = match(r"d-gpucb / gp-ucb ask: {n}x", out)
    assert ratio == pytest.approx(dg / gp, rel=0.005 / gp + 0.005 / dg + 0.01)  # 2-digit medians
    assert json.loads((tmp_path / "tb.json").read_text())["fd"] is False


@pytest.mark.slow
def test_nuts_route_speed(script):
    # each route is a fresh process of a checkout: this tree for both
    route = f"{sys.executable}:{ROOT}"
    out = script(
        "speed/nuts_route_speed.py --old", route, "--new", route, "--sizes 10 --reps 1 --repeat 1"
    )
    assert "d=2, 4 chains x 400 draws, 300 tuning; 1 runs of 1 fits per route" in out
    t_old, t_new, ratio, paired, m_old, m_new = match(r"10 +{n} +{n} +{n} +{n} +{n} / {n}", out)
    assert t_old > 0 and t_new > 0 and ratio == pytest.approx(t_new / t_old, abs=0.01)
    assert m_old == pytest.approx(m_new, abs=0.05)  # one tree: the same fit


def test_problem_eval_time(script):
    out = script("speed/problem_eval_time.py --problems synthetic,branin")
    lines = out.strip().splitlines()
    assert lines[0].split() == ["problem", "d", "J", "domain", "build", "s", "eval", "ms"]
    assert len(lines) == 3
    for line, (name, d, J) in zip(lines[1:], [("synthetic", 1, 10), ("branin", 2, 1)], strict=True):
        fields = line.split()
        assert fields[:3] == [name, str(d), str(J)]
        build, ms = map(float, fields[-2:])
        assert build >= 0 and ms > 0


# ---------------------------------------------------------------------------- studies
def test_async_gain(script, tmp_path):
    out = script(
        "studies/async_gain.py --problems flu --seeds 1 --iterations 7 --q 1,2 --out", tmp_path
    )
    runs = matches(
        r"flu seed 0 q=\d: cumulative regret {n}, simulated time {n}, compute {n} s", out
    )
    assert len(runs) == 2
    summary = (tmp_path / "summary.md").read_text()
    assert "python benchmarks/studies/async_gain.py --problems flu --seeds 1" in summary
    assert "--strategy d-gpucb --inference map" in summary  # the command reruns this study
    assert "| final simple regret | minus q=1's (paired) |" in summary
    rows = [line for line in summary.splitlines() if line.startswith("| flu |")]
    assert len(rows) == 2 and all(len(r.strip("|").split("|")) == 10 for r in rows)
    ds = xr.load_dataset(tmp_path / "async.nc")
    t = ds["finish_time"].isel(iteration=-1).sel(problem="flu", seed=0)
    assert 0 < float(t.sel(q=2)) <= float(t.sel(q=1))  # two in flight finish no later
    assert np.all(np.isfinite(ds["cumulative_regret"]))
    assert (tmp_path / "regret.png").stat().st_size > 0


def test_box_beta(script, tmp_path):
    out = script(
        "studies/box_beta.py --strategies gp-ucb --seeds 2 --iterations 7 --workers 1 --out",
        tmp_path / "b.json",
    )
    runs = json.loads((tmp_path / "b.json").read_text())["runs"]
    assert len(runs) == 2 * 2  # schedules × seeds
    for r in runs:
        assert 0 <= r["on_face"] <= 1 and r["beta_mean"] > 0
        assert 0 <= r["simple_regret"] <= r["cumulative_regret"]
    assert len(matches(r"gp-ucb +continuous +on a face .*, cumulative .*", out)) == 1
    paired = matches(r"gp-ucb +kandasamy +on a face .*; paired cumulative vs continuous .*", out)
    assert len(paired) == 1


def test_fast_convergence(script):
    # NUTS for every fit (no importance sampling from the prior, no refreshes)
    out = script(
        "studies/fast_convergence.py --problem flu --seeds 1 --steps 8",
        "--settings prior_draws=0,max_refreshes=0",
    )
    assert match(r"seed 0: {n} s, regret {n}", out)[0] > 0
    n, first, ok, importance = match(
        r"{n} NUTS refits: {n}% converged first, {n}% after repair; "
        r"{n} fits by importance sampling",
        out,
    )
    assert n >= 1 and 0 <= first <= ok <= 100 and importance >= 0


def test_fast_vs_straightforward_regret(script, tmp_path):
    out = script(
        "studies/fast_vs_straightforward_regret.py --problem flu --seeds 2 --iterations 6",
        "--workers 1 --out",
        tmp_path / "r.json",
    )
    report = json.loads((tmp_path / "r.json").read_text())
    assert len(report["runs"]) == 4 and report["paired_seeds"] == [0, 1]
    by = {(r["seed"], r["fast"]): r["cumulative_regret"] for r in report["runs"]}
    diff = [by[s, True] - by[s, False] for s in (0, 1)]
    assert report["paired_difference"][0] == pytest.approx(np.mean(diff))
    assert len(matches(r"seed \d (?:fast|straightforward): regret {n}, {n} s", out)) == 4
    match(r"final cumulative regret, paired_difference: {n} ± {n} \(2 seeds\)", out)
    # the runs of a finished report, summarised again
    script(
        "studies/fast_vs_straightforward_regret.py --summarize",
        tmp_path / "r.json",
        "--out",
        tmp_path / "pooled.json",
    )
    pooled = json.loads((tmp_path / "pooled.json").read_text())
    assert pooled["paired_difference"] == pytest.approx(report["paired_difference"])


@pytest.mark.slow
def test_inducing_points(script):
    out = script("studies/inducing_points.py --T 24 --M 6,24 --draws 2 --points 30")
    assert match(r"T=24 J=3: first fits in {n} s", out)[0] > 0
    coarse = matches(r"T=24 \S+ +M=   6: variance x{n} \(90%: x{n}\), .*", out)
    assert len(coarse) == 4  # 3 components and the composed GP
    assert all(r >= 1.0 - 1e-6 and r90 >= r for r, r90 in coarse)  # never below exact
    # inducing inputs at every data input: the exact predictive
    whole = matches(
        r"T=24 \S+ +M=  24: variance x{n} \(90%: x{n}\), \|mean error\| {n} sd, .*", out
    )
    assert len(whole) == 4 and all(abs(r - 1) < 1e-3 and e < 1e-3 for r, _, e in whole)
    cover = matches(
        r"T=24 M=24: median variance x{n} the exact over GPs; components' coverage "
        r"{n} against {n} exact \(nominal 0.95\)",
        out,
    )
    assert len(cover) == 1 and cover[0][1] == pytest.approx(cover[0][2])


def test_importance_coverage(script, tmp_path):
    out = script(
        "studies/importance_coverage.py --reps 2 --n 8 --m 20 --prior-draws 4096 "
        "--small-draws 512 --out",
        tmp_path / "c.json",
    )
    fits = matches(
        r"n= 8 rep +\d: importance ESS +{n} k +{n} (?:pass|fail) cover {n}  small ESS +{n} "
        r"(?:pass|fail) cover {n}  NUTS (?:ok |bad) cover {n}  \(true ls {n}-{n}, sigma {n}\)",
        out,
    )
    assert len(fits) == 2
    assert all(0 <= f[i] <= 1 for f in fits for i in (2, 4, 5))
    cover = r"{n} fits, importance {n} ± {n}, NUTS {n} ± {n}, importance − NUTS {n} ± {n}"
    per_n = matches(r"n=8 M=(?:4096|512) passed, level 0\.(?:50|90|95): " + cover, out)
    bins = matches(r"all n and M, (?:failed|ESS .+), level 0\.(?:50|95): " + cover, out)
    assert len(per_n) == 6 and len(bins) == 8
    assert sum(b[0] for b in bins) == 2 * 2 * 2  # 2 datasets × 2 arms, at 2 levels
    for row in per_n + bins:
        assert all(0 <= c <= 1 for c in (row[1], row[3]) if np.isfinite(c))
    assert re.search(
        r"^verdict: importance intervals at ESS >= 128 are .* 2 SE of NUTS's", out, re.M
    )
    report = json.loads((tmp_path / "c.json").read_text())
    assert len(report["fits"]) == 2 and report["levels"] == [0.5, 0.9, 0.95]
    for row in report["fits"]:
        for arm in ("importance", "importance_small", "nuts"):
            assert all(0 <= c <= 1 for c in row[arm]["cover"]) and row[arm]["width"] > 0


def test_loo_choice(script):
    out = script("studies/loo_choice.py --problem flu --seeds 1 --evaluations 7 --points 20")
    seeds = matches(r"seed 0 \S+: LOO winner \S+ covers {n}, stacked {n}, .*", out)
    assert len(seeds) == 5  # flu's components
    rows = matches(r"\S+/\S+ +coverage {n}  mean LOO rank {n}", out)
    assert len(rows) == 8  # 4 kernels × 2 lengthscale priors
    assert all(0 <= cover <= 1 for cover, _ in rows)
    assert sum(rank for _, rank in rows) == pytest.approx(sum(range(1, 9)))  # ranks 1..8
    covers = match(
        r"flu: LOO winner covers {n}, stacking {n}, the earlier default \(ExpQuad/lognormal\) "
        r"{n}, today's \(Matern32/inverse-gamma\) {n} \(5 components × seeds, nominal 0.95\)",
        out,
    )
    assert all(0 <= c <= 1 for c in covers)


def test_output_warp_coverage(script, tmp_path):
    out = script(
        "studies/output_warp_coverage.py --problems flu --seeds 2 --iterations 12 --at 12 "
        "--points 24 --warps none,sas --out",
        tmp_path / "w.json",
    )
    cover = r"flu t= 12 (package|none|sas) +level 0\.(50|90|95): components (.*)  objective "
    rows = [
        (m[1], float("0." + m[2]), numbers(m[3])[::2], numbers(m[4])[0])
        for line in out.splitlines()
        if (m := re.fullmatch(cover + r"(.*)  \(2 seeds\)", line.strip()))
    ]
    assert len(rows) == 3 * 3  # 3 arms × 3 levels
    for arm in ("package", "none", "sas"):
        by_level = sorted((level, comps, obj) for a, level, comps, obj in rows if a == arm)
        assert all(len(comps) == 5 and all(0 <= c <= 1 for c in comps) for _, comps, _ in by_level)
        for lower, higher in zip(by_level, by_level[1:], strict=False):  # nested intervals
            assert all(a <= b for a, b in zip(lower[1], higher[1], strict=True))
            assert lower[2] <= higher[2]
    assert matches(r"flu t= 12 sas +log likelihood at the MAP − none's: {n} ± {n}", out)
    report = json.loads((tmp_path / "w.json").read_text())
    (seed0, _) = report["runs"]["flu"]
    assert set(seed0["12"]) == {"package", "none", "sas"}
    assert len(seed0["12"]["sas"]["lml"]) == 5


def test_warped_recovery(script, tmp_path):
    out = script(
        "studies/warped_recovery.py --datasets 2 --n 30 --held-out 40 --draws 40 --tune 60 --out",
        tmp_path / "r.json",
    )
    lines = matches(
        r"dataset \d: coverage warped {n} plain {n}; top fifth warped {n} plain {n}; "
        r"intervals holding the truth: \[.*\]",
        out,
    )
    assert len(lines) == 2 and all(0 <= c <= 1 for line in lines for c in line)
    for key in ("warped", "plain", "warped_top", "plain_top"):
        assert matches(rf"{key}: {{n}} ± {{n}}", out)
    held = match(r"95% intervals holding the truth: {n} of {n}", out)
    assert held[1] == 8 and 0 <= held[0] <= 8
    report = json.loads((tmp_path / "r.json").read_text())
    assert len(report["datasets"]) == 2 and len(report["datasets"][0]["warp_loc"]) == 4


def test_nuts_convergence(script):
    out = script("studies/nuts_convergence.py --draws 30 --tune 30 --chains 2 --T 10")
    fits = matches(
        r"T= 10 f\d: r-hat {n}  bulk ESS +{n}  tail ESS +{n}  divergences +{n}  (?:ok|bad)  {n} s",
        out,
    )
    assert len(fits) == 5 and all(r > 0.9 and t > 0 for r, _, _, _, t in fits)
    assert "2 x 30 draws, 30 tuning steps, diag mass matrix: median r-hat" in out


def test_perceived_diagnosis(script, tmp_path):
    out = script(
        "studies/perceived_diagnosis.py --n 10 --trials 1 --samples 64 --out", tmp_path / "p.json"
    )
    report = json.loads((tmp_path / "p.json").read_text())
    tails = report["prior_tails"]
    assert tails["stations"][-1] <= tails["max over stations"]
    (trial,) = report["10"]
    for model in ("decomposed", "direct"):
        s = trial[model]["all"]
        assert s["rmse"] > 0 and 0 <= s["cover95"] <= 1 and s["upper"] > 0
        rmse, cover, upper, count = match(
            rf"10 \| {model} \| all \| {{n}} \| {{n}} \| {{n}} \| {{n}}", out
        )
        assert count == s["count"] == 1494 - 10  # the unobserved stations
    assert -1 <= trial["error_correlation_T_H"] <= 1


def test_prior_sweep(script, bench):
    out = script(
        "studies/prior_sweep.py --problem synthetic --bench",
        bench,
        "--peer gp-ucb --trials 2 --iterations 7 --workers 1",
    )
    ours, se, peer, paired, paired_se = match(
        r"synthetic map priors default: ours {n} ± {n}, gp-ucb {n}, paired {n} ± {n} \(2 trials\)",
        out,
    )
    assert peer == pytest.approx(final(bench, "cumulative_regret", "gp-ucb", 6).mean(), abs=1e-3)
    assert paired == pytest.approx(ours - peer, abs=2e-3)
    per_trial = re.search(r"per trial: \[(.*)\]", out).group(1)
    assert len(numbers(per_trial)) == 2


def test_run_posterior(script):
    out = script("studies/run_posterior.py --steps 7")
    names = re.findall(r"^(sick_days_\S+): \S", out, flags=re.MULTILINE)
    assert len(names) == 5  # flu's components, each described
    assert out.count("ess_bulk ess_tail r_hat mcse_mean mcse_sd") == 5
    assert len(matches(r"sigma +{n} +{n} +{n} +{n} +{n}", out)) == 5


# ---------------------------------------------------------------------------- reports
def test_ask_walk(script):
    out = script("reports/ask_walk.py", "--n-told 6 --checkpoint")
    (crossed, outside), (back,) = (
        match(r"modules crossed: {n} \(without the GP internals: {n}\)", out),
        match(r"calls back into Optimizer: {n}", out),
    )
    listed = re.findall(r"^  (\S+\.py)$", out, re.M)
    assert listed[0] == "loop/optimizer.py" and len(listed) == outside <= crossed
    assert "loop/checkpoint/file.py" in listed and back == 0  # the parts never climb back up
    plain = script("reports/ask_walk.py", "--n-told 6")
    _, outside = match(r"modules crossed: {n} \(without the GP internals: {n}\)", plain)
    assert outside <= 15  # issue 65's line: a reader follows one ask() through at most 15


def test_tb_optimum(script, tmp_path_factory, monkeypatch):
    import shutil

    from pp_decomp.models import optima, tuberculosis

    runs = make_bench(
        tmp_path_factory, "tb", problems=["tuberculosis-110"], strategies=["random"],
        trials=1, iterations=6,
    )  # fmt: skip
    table = tmp_path_factory.mktemp("optima") / "optima.json"
    shutil.copy(optima.OPTIMA_FILE, table)
    monkeypatch.setattr(optima, "OPTIMA_FILE", table)
    # no swaps (a pass costs seconds): the polished best is the runs' best
    monkeypatch.setattr(tuberculosis, "_swap_search", lambda total, x, p: (x, total(x)))
    out = script("reports/tb_optimum.py", runs, "--top 2 --write")
    stored = match(r"stored optimum {n}", out)[0]
    found = match(r"runs' best {n} over 6 policies .*", out)[0]
    assert match(r"polished best {n} \(from the runs' #1\)", out)[0] == pytest.approx(found)
    assert found > stored and out.rstrip().endswith("stored optimum kept")  # random policies
    assert table.read_text() == optima.OPTIMA_FILE.read_text()


def test_average_regret(script, bench):
    out = script("reports/average_regret.py", bench, "--at 7,3 --tail 2")
    rows = {
        r[1]: r for r in (line.split(" | ") for line in out.splitlines()) if r[0] == "| synthetic"
    }
    with xr.open_dataset(bench / "bench.nc") as ds:
        avg = (ds["cumulative_regret"] / ds["iteration"]).sel(problem="synthetic")
        paired = (avg.sel(strategy="d-gpucb") - avg.sel(strategy="gp-ucb")).sel(iteration=7)
        for strategy in ("d-gpucb", "gp-ucb"):
            at3, at7 = (rows[strategy][k].split(" ± ") for k in (3, 4))
            for (mean, se), t in ((at3, 3), (at7, 7)):
                runs = avg.sel(strategy=strategy, iteration=t).values
                assert float(mean) == pytest.approx(runs.mean(), rel=1e-3)
                assert float(se) == pytest.approx(runs.std(ddof=1) / np.sqrt(2), rel=0.05)
    # the bench's baseline is gp-ucb: d-gpucb's row holds the paired difference
    diff = float(rows["d-gpucb"][5].split(" ± ")[0])
    assert diff == pytest.approx(float(paired.mean()), rel=1e-3)
    assert rows["gp-ucb"][5] == "" and rows["gp-ucb"][6].endswith(" of 2 |")
    with pytest.raises(SystemExit, match=r"--at must lie in 1\.\.7"):
        script("reports/average_regret.py", bench, "--at 3,9")


def test_paired_compare(script, bench):
    out = script("reports/paired_compare.py", bench, "gp-ucb", bench, "d-gpucb")
    for var in ("simple_regret", "cumulative_regret"):
        a, a_se, b, b_se, diff, diff_se, z = match(
            rf"final {var} over 2 trials: A {{n}} ± {{n}}, B {{n}} ± {{n}}; "
            r"B − A {n} ± {n} \({n} SE\)",
            out,
        )
        assert a == pytest.approx(final(bench, var, "gp-ucb").mean(), rel=1e-3)
        assert b == pytest.approx(final(bench, var, "d-gpucb").mean(), rel=1e-3)
        assert diff == pytest.approx(b - a, rel=1e-2, abs=1e-3)


def test_ask_times(script, bench):
    out = script("reports/ask_times.py", bench)
    assert out.startswith("asks after 5 evaluations")
    with xr.open_dataset(bench / "bench.nc") as ds:
        for strategy in ("d-gpucb", "gp-ucb"):
            sec = ds["ask_seconds"].sel(strategy=strategy).isel(iteration=slice(5, None))
            n, median, mean, p95, longest = match(
                rf"synthetic {strategy}: {{n}} asks, median {{n}} s, mean {{n}} s, "
                r"p95 {n} s, max {n} s",
                out,
            )
            assert n == sec.size == 4  # two trials, two asks after the design each
            assert median == pytest.approx(float(np.median(sec)), abs=1e-3)
            assert longest == pytest.approx(float(sec.max()), abs=1e-3)
            assert median <= p95 <= longest and mean <= longest
    out = script("reports/ask_times.py", bench, "--after 6")
    assert match(r"synthetic gp-ucb: {n} asks, .*", out)[0] == 2
    with pytest.raises(SystemExit, match="--problem 'flu' is not in"):
        script("reports/ask_times.py", bench, "--problem flu")


def test_refit_report(script, bench):
    out = script("reports/refit_report.py", bench, "--strategy d-gpucb")
    trials = matches(r"trial\d+: {n} refits, {n} by NUTS .*simple regret {n}", out)
    assert len(trials) == 2
    with xr.open_dataset(bench / "runs/synthetic/d-gpucb/trial000.nc") as ds:
        refits = int(ds["refit"].values.reshape(ds.sizes["iteration"], -1)[:, 0].sum())
    assert trials[0][0] == refits and trials[0][1] == 0  # MAP: no fit by NUTS
    assert "all 2 trials: " in out and "final simple regret" in out


def test_structure_recovery(script, additive_bench):
    out = script("reports/structure_recovery.py", additive_bench)
    assert "add-gp-ucb (1 runs)" in out
    rows = matches(r"relearning \d of \d \(evaluation ~{n}\): CC {n}  CS {n}", out)
    assert rows and all(5 <= it <= 8 and 0 <= cc <= 1 and 0 <= cs <= 1 for it, cc, cs in rows)


def test_decomposition_identifiability(script, additive_bench):
    out = script(
        "reports/decomposition_identifiability.py",
        additive_bench,
        "--problem kandasamy-10-3-3 --sizes 6,8",
    )
    rows = matches(
        r"trial000.nc n=  \d: log ML true +{n}, best random +{n} \(CC {n}\), "
        r"hill-climb +{n} \(CC {n}\)",
        out,
    )
    assert len(rows) == 2
    for _true, best, cc_best, climbed, cc_climbed in rows:
        assert climbed >= best - 0.05  # the hill-climb starts at the best random partition
        assert 0 <= cc_best <= 1 and 0 <= cc_climbed <= 1
    assert len(matches(r"n=  \d \(1 runs\): +{n} +{n} +{n} +{n}", out)) == 2


@pytest.mark.compare
def test_peer_models(script, tmp_path, peer_bench):
    out = script(
        "reports/peer_models.py --runs", peer_bench, "--n 6 --trials 1 --out", tmp_path / "m.json"
    )
    header = (
        "| n | model | rmse | logpd | cover95 | sd | sum_rmse | sum_logpd | sum_cover95 | sum_sd |"
    )
    assert header in out
    for model in ("pp_decomp", "botorch"):
        (row,) = [line for line in out.splitlines() if line.startswith(f"| 6 | {model} |")]
        values = numbers(row.split("|", 3)[3])
        assert len(values) == 8 and np.all(np.isfinite(values))
    rows = json.loads((tmp_path / "m.json").read_text())["rows"]
    assert {r["model"] for r in rows} == {"pp_decomp", "botorch"}
    assert all(0 <= r["cover95"] <= 1 and r["rmse"] > 0 for r in rows)


# --------------------------------------------------------------------------- coverage
def scripts() -> set[str]:
    return {p.relative_to(BENCHMARKS).as_posix() for p in BENCHMARKS.glob("**/*.py")}


def test_every_benchmark_script_is_smoke_run_by_a_test():
    assert scripts() == set(SMOKE_TESTS) | set(ELSEWHERE)
    assert not set(SMOKE_TESTS) & set(ELSEWHERE)
    for script, test in SMOKE_TESTS.items():
        assert f'"{script}' in inspect.getsource(globals()[test]), (script, test)
    for script, test_file in ELSEWHERE.items():
        assert Path(script).stem in (ROOT / "tests" / test_file).read_text()


def test_every_benchmark_script_is_in_the_benchmarks_readme():
    readme = (BENCHMARKS / "README.md").read_text()
    assert sorted(s for s in scripts() if f"`{s}`" not in readme) == []
