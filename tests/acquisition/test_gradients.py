"""Every analytic input gradient against central finite differences: the per-draw GP
posteriors (batched, incremental, the component and fast-path views), the linear
D-GPUCB bound (independent and copula-coupled, constant, callable and given weight
gradients), tuberculosis-110's weights, and the maximiser's use of them."""

from types import SimpleNamespace

import numpy as np
import pytest

from pp_decomp import Box, ComponentGP, HyperDraws, LinearComposition, Problem
from pp_decomp.acquisition.surrogate import CopulaSurrogate, DecomposedSurrogate
from pp_decomp.acquisition.ucb import DGPUCB
from pp_decomp.components.posterior.batched import GPPosterior
from pp_decomp.components.posterior.gradient import NoInputGradient
from pp_decomp.components.posterior.incremental import IncrementalPosterior
from pp_decomp.kernels import Matern52, Periodic
from pp_decomp.optim import maximizers

RNG = np.random.default_rng(3)
X = RNG.uniform(size=(12, 3))
Y = np.c_[np.sin(3 * X[:, 0]) + X[:, 1], np.cos(2 * X[:, 2]) * X[:, 0], X.sum(1) ** 2]
DRAWS = HyperDraws(
    ls=RNG.uniform(0.3, 0.9, (4, 3)),
    eta=RNG.uniform(0.6, 1.4, 4),
    sigma=np.full(4, 0.1),
    alpha=RNG.uniform(0.5, 3.0, 4),
)
XQ = RNG.uniform(0.05, 0.95, size=(5, 3))
PLAIN = HyperDraws(DRAWS.ls, DRAWS.eta, DRAWS.sigma)  # kernels other than rq take no alpha


def draws_for(kernel: str) -> HyperDraws:
    return DRAWS if kernel == "rq" else PLAIN


def central(f, X, h=1e-6):
    """Central differences of ``f: (m, d) -> (..., m)`` at ``X``: (..., m, d)."""
    cols = []
    for a in range(X.shape[1]):
        e = np.zeros(X.shape[1])
        e[a] = h
        cols.append((f(X + e) - f(X - e)) / (2 * h))
    return np.stack(cols, axis=-1)


def close(analytic, numeric, rtol=1e-5):
    scale = max(np.abs(numeric).max(), 1e-12)
    assert np.abs(analytic - numeric).max() <= rtol * scale, np.abs(analytic - numeric).max()


@pytest.mark.parametrize("kernel", ["se", "matern52", "matern32", "rq"])
def test_batched_posterior_moments_have_their_gradients(kernel):
    post = GPPosterior(kernel, X, Y[:, 0], draws_for(kernel), mean_var=0.5)
    mean, var, dmean, dvar = post.per_draw_grad(XQ)
    np.testing.assert_array_equal(np.c_[mean, var], np.c_[post.per_draw(XQ)])
    close(dmean, central(lambda Z: post.per_draw(Z)[0], XQ))
    close(dvar, central(lambda Z: post.per_draw(Z)[1], XQ))


def test_incremental_posterior_gradients_for_a_resample_of_its_draws():
    inc = IncrementalPosterior("matern52", X[:8], Y[:8, 1], PLAIN, None, mean_var=0.3)
    inc.append(X[8], Y[8, 1])
    idx = np.array([3, 0, 3, 1])
    mean, var, dmean, dvar = inc.at_grad(XQ, idx)
    np.testing.assert_allclose(np.c_[mean, var], np.c_[inc.at(XQ, idx)], rtol=1e-12)
    close(dmean, central(lambda Z: inc.at(Z, idx)[0], XQ))
    close(dvar, central(lambda Z: inc.at(Z, idx)[1], XQ))


def test_a_component_gp_differentiates_in_its_inputs_units():
    gp = ComponentGP("matern52", 3, bounds=(np.zeros(3), np.array([2.0, 5.0, 0.5])))
    Xb = X * [2.0, 5.0, 0.5]
    gp.condition(Xb, Y[:, 2], PLAIN)
    Xq = XQ * [2.0, 5.0, 0.5]
    mean, var, dmean, dvar = gp.predict_per_draw_grad(Xq)
    close(dmean, central(lambda Z: gp.predict_per_draw(Z)[0], Xq))
    close(dvar, central(lambda Z: gp.predict_per_draw(Z)[1], Xq))


def test_without_an_input_gradient_the_maximiser_takes_differences():
    from pp_decomp.acquisition.surrogate import HallucinatedGP
    from pp_decomp.components.posterior.gradient import cross_and_factor

    with pytest.raises(NoInputGradient):  # a kernel expression
        cross_and_factor(Matern52() + Periodic(period=1.0, active_dims=[0]), X, XQ, PLAIN)
    comps = _components()
    comps[1] = HallucinatedGP(comps[1], XQ[:2])  # pending inputs: no gradient yet
    acq = DGPUCB(DecomposedSurrogate(comps, _problem("constant")), beta=2.0)
    with pytest.raises(NotImplementedError):
        acq.value_and_grad(XQ)
    assert not maximizers.has_gradient(acq, XQ[:1])
    x, v = maximizers.maximize(acq, Box(np.zeros(3), np.ones(3)), seed=0)
    assert v == pytest.approx(float(acq(x[None])[0]))


def _fast_view(kernel: str, width: float, n: int, y: np.ndarray, **post_kw):
    """A fast-path box view of a GP on ``width · X[:n]``, its incremental posterior on
    the first ``n`` points (standardised ``y``) and ``post_kw``."""
    from pp_decomp.loop.updaters.fast_view import FastGPView

    gp = ComponentGP(kernel, 3, name="f", bounds=(np.zeros(3), np.full(3, width)))
    gp.condition(width * X[:n], y[:n], PLAIN)
    ys = (y - y.mean()) / y.std()
    post = IncrementalPosterior(kernel, X[:n], ys[:n], PLAIN, **post_kw)
    return FastGPView(SimpleNamespace(gp=gp, post=post), None, np.random.default_rng(0)), ys


def test_the_fast_paths_box_view_has_the_incremental_gradients():
    view, _ = _fast_view("se", 4.0, len(X), Y[:, 0])
    Xq = 4 * XQ
    mean, var, dmean, dvar = view.predict_per_draw_grad(Xq)
    np.testing.assert_allclose(np.c_[mean, var], np.c_[view.predict_per_draw(Xq)], rtol=1e-12)
    close(dmean, central(lambda Z: view.predict_per_draw(Z)[0], Xq))
    close(dvar, central(lambda Z: view.predict_per_draw(Z)[1], Xq))


def _components(kernels=("se", "matern52", "rq")):
    return [
        ComponentGP(k, 3, name=f"f{j}").condition(X, Y[:, j], draws_for(k))
        for j, k in enumerate(kernels)
    ]


def _weights(Z):
    return np.c_[1 + Z[:, 0] ** 2, np.sin(2 * Z[:, 1]), -0.5 + Z[:, 2]]


def _weights_grad(Z):
    m = len(Z)
    dw = np.zeros((m, 3, 3))
    dw[:, 0, 0], dw[:, 1, 1], dw[:, 2, 2] = 2 * Z[:, 0], 2 * np.cos(2 * Z[:, 1]), 1.0
    db = np.c_[np.zeros(m), Z[:, 2] * 0 + 3.0, np.zeros(m)]
    return dw, db


def _problem(kind: str, maximize: bool = True) -> Problem:
    box = Box(np.zeros(3), np.ones(3))
    if kind == "constant":
        return Problem(box, n_components=3, weights=[1.0, -2.0, 0.5], maximize=maximize)
    offset = lambda Z: 3.0 * Z[:, 1]  # noqa: E731
    grad = _weights_grad if kind == "given" else None
    return Problem(
        box, n_components=3, weights=_weights, offset=offset, weights_grad=grad, maximize=maximize
    )


@pytest.mark.parametrize("kind", ["constant", "differences", "given"])
@pytest.mark.parametrize("coupled", [False, True])
def test_the_d_gpucb_bound_has_its_gradient(kind, coupled):
    problem = _problem(kind, maximize=kind != "given")
    comps = _components()
    model = CopulaSurrogate(comps, problem) if coupled else DecomposedSurrogate(comps, problem)
    acq = DGPUCB(model, beta=2.5)
    value, grad = acq.value_and_grad(XQ)
    np.testing.assert_allclose(value, acq(XQ), rtol=1e-12)
    close(grad, central(acq, XQ), rtol=1e-4 if kind == "differences" else 1e-5)


def test_weight_gradients_are_checked_by_shape():
    bad = LinearComposition(_weights, 3, grad=lambda Z: (np.zeros((len(Z), 3)), np.zeros(len(Z))))
    with pytest.raises(ValueError, match="weights_grad"):
        bad.weights_and_grad(XQ)
    nan = LinearComposition(
        _weights, 3, grad=lambda Z: (np.full((len(Z), 3, 3), np.nan), np.zeros((len(Z), 3)))
    )
    with pytest.raises(ValueError, match="weights_grad.*must be finite"):
        nan.weights_and_grad(XQ[:1])
    with pytest.raises(TypeError, match="weights_grad\\) must be a callable"):
        Problem(Box(np.zeros(3), np.ones(3)), n_components=3, weights=_weights, weights_grad=3.0)
    with pytest.raises(ValueError, match="weights_grad is the gradient of callable weights"):
        Problem(
            Box(np.zeros(3), np.ones(3)),
            n_components=3,
            g=lambda F: F.sum(-1),
            weights_grad=_weights_grad,
        )


def test_tuberculosis_110_weights_have_their_gradients():
    from pp_decomp.models.tuberculosis import TB110, AgeStructure, TBModel

    model = TBModel(TB110, AgeStructure.single_years())
    V = np.random.default_rng(0).uniform(0, 0.6, size=(2, model.n))
    ds, dw0 = model.yearly_weights_grad(V)
    cols_s, cols_w = [], []
    h = 1e-6
    for i in range(model.n):
        up, down = V.copy(), V.copy()
        up[:, i] += h
        down[:, i] -= h
        (_, su, wu), (_, sd, wd) = model.yearly_weights(up), model.yearly_weights(down)
        cols_s.append((su - sd) / (2 * h))
        cols_w.append((wu - wd) / (2 * h))
    close(ds, np.stack(cols_s, -1))
    close(dw0, np.stack(cols_w, -1))


class Bowl:
    """``-|x - c|²`` with its gradient, counting the calls of each."""

    def __init__(self, c, gradient=True):
        self.c, self.calls, self.grads = np.asarray(c), 0, 0
        if not gradient:
            self.value_and_grad = self._none

    def __call__(self, X):
        self.calls += 1
        return -((np.asarray(X) - self.c) ** 2).sum(1)

    def value_and_grad(self, X):
        self.grads += 1
        X = np.asarray(X)
        return -((X - self.c) ** 2).sum(1), -2 * (X - self.c)

    def _none(self, X):
        raise NotImplementedError


@pytest.mark.parametrize("constrained", [False, True])
def test_the_box_maximiser_climbs_on_analytic_gradients(constrained):
    d = maximizers.GRADIENT_MIN_DIM
    box = (
        Box(np.zeros(d), np.ones(d), A=np.ones((1, d)), b=[0.5 * d])  # c sums to 0.45 d
        if constrained
        else Box(np.zeros(d), np.ones(d))
    )
    c = np.linspace(0.2, 0.7, d)
    acq = Bowl(c)
    x, v = maximizers.maximize(acq, box, seed=0)
    np.testing.assert_allclose(x, c, atol=1e-6)
    assert acq.grads > 2  # the searches' steps, on value_and_grad
    fd = Bowl(c, gradient=False)
    x_fd, _ = maximizers.maximize(fd, box, seed=0)
    np.testing.assert_allclose(x_fd, c, atol=1e-5)
    assert fd.grads == 0 and not maximizers.has_gradient(fd, c[None])


def test_below_the_gradients_dimension_the_searches_take_differences():
    d = maximizers.GRADIENT_MIN_DIM - 1
    c = np.linspace(0.2, 0.7, d)
    acq = Bowl(c)
    x, _ = maximizers.maximize(acq, Box(np.zeros(d), np.ones(d)), seed=0)
    np.testing.assert_allclose(x, c, atol=1e-5)
    assert acq.grads == 0


def test_excluded_inputs_keep_no_slope():
    c = np.full(2, 0.5)
    acq = maximizers._Excluding(Bowl(c), c[None], np.ones(2), 1e-3)
    v, g = acq.value_and_grad(np.array([c, [0.1, 0.2]]))
    assert v[0] == -np.inf and np.all(g[0] == 0) and np.all(g[1] != 0)
    plain = maximizers._Excluding(SimpleNamespace(), c[None], np.ones(2), 1e-3)
    with pytest.raises(NotImplementedError):
        plain.value_and_grad(c[None])


def _composed():
    from pp_decomp.acquisition.surrogate import ComposedSurrogate

    return ComposedSurrogate(ComponentGP("matern52", 3).condition(X, Y.sum(1), PLAIN))


@pytest.mark.parametrize("rule", ["ucb", "ei", "pi", "d-ei", "d-pi"])
def test_gp_ucb_and_the_improvements_have_their_gradients(rule):
    from pp_decomp.acquisition.improvement import ExpectedImprovement, ProbabilityOfImprovement
    from pp_decomp.acquisition.ucb import UCB

    decomposed = DecomposedSurrogate(_components(), _problem("given"))
    best = float(Y.sum(1).max()) - 0.3  # some inputs improve on it, some hardly
    acq = {
        "ucb": lambda: UCB(_composed(), beta=3.0),
        "ei": lambda: ExpectedImprovement(_composed(), best),
        "pi": lambda: ProbabilityOfImprovement(_composed(), best, 0.01),
        "d-ei": lambda: ExpectedImprovement(decomposed, best),
        "d-pi": lambda: ProbabilityOfImprovement(decomposed, best, 0.01),
    }[rule]()
    value, grad = acq.value_and_grad(XQ)
    np.testing.assert_allclose(value, acq(XQ), rtol=1e-12)
    close(grad, central(acq, XQ), rtol=1e-4 if rule.endswith("pi") else 1e-5)


def test_the_smaller_bound_takes_the_gradient_of_the_smaller_part():
    from pp_decomp.acquisition.ucb import SmallerUCB

    dec = DGPUCB(DecomposedSurrogate(_components(), _problem("constant")), beta=2.0)
    acq = SmallerUCB(dec, _composed(), beta=2.0)
    value, grad = acq.value_and_grad(XQ)
    a, da = dec.value_and_grad(XQ)
    b, db = acq.composed.value_and_grad(XQ)
    assert np.any(a < b) or np.any(b < a)
    np.testing.assert_array_equal(value, np.minimum(a, b))
    np.testing.assert_array_equal(grad, np.where((a <= b)[:, None], da, db))
    close(grad, central(acq, XQ))  # no input of XQ sits on the kink


def _nonlinear_problem() -> Problem:
    return Problem(
        Box(np.zeros(3), np.ones(3)),
        n_components=3,
        g=lambda F, Z: F[..., 0] * F[..., 1] - F[..., 2] ** 2 + np.sin(3 * Z[..., 0]),
    )


@pytest.mark.parametrize("beta", [1.0, 15.0])  # a sample quantile; the normal tail beyond it
@pytest.mark.parametrize("draws", ["one", "several"])
@pytest.mark.parametrize("coupled", [False, True])
def test_the_monte_carlo_bound_has_its_pathwise_gradient(beta, draws, coupled):
    from pp_decomp.acquisition.ucb import MonteCarloUCB

    d = PLAIN if draws == "several" else HyperDraws(PLAIN.ls[:1], PLAIN.eta[:1], PLAIN.sigma[:1])
    comps = [
        ComponentGP(k, 3).condition(X, Y[:, j], d) for j, k in enumerate(("se", "matern52", "se"))
    ]
    problem = _nonlinear_problem()
    model = CopulaSurrogate(comps, problem) if coupled else DecomposedSurrogate(comps, problem)
    acq = MonteCarloUCB(model, beta, n_samples=256, seed=1)
    assert (acq.groups > 1) == (draws == "several")
    value, grad = acq.value_and_grad(XQ)
    np.testing.assert_allclose(value, acq(XQ), rtol=1e-10)
    close(grad, central(acq, XQ, h=1e-7), rtol=1e-4)


@pytest.mark.parametrize("weighted", [False, True])
def test_mixture_moments_have_their_gradients(weighted):
    from pp_decomp.components.posterior.batched import mixture_moments, mixture_moments_grad

    post = GPPosterior("matern52", X, Y[:, 1], PLAIN, mean_var=0.5)
    w = np.array([0.1, 0.5, 0.3, 0.1]) if weighted else None

    def moments(Z):
        mean_s, var_s = post.per_draw(Z)
        if w is None:
            return np.stack(mixture_moments(mean_s, var_s))
        mean = w @ mean_s
        return np.stack([mean, w @ (var_s + mean_s**2) - mean**2])

    mean, var, dmean, dvar = mixture_moments_grad(*post.per_draw_grad(XQ), w)
    np.testing.assert_allclose(np.stack([mean, var]), moments(XQ), rtol=1e-12)
    close(dmean, central(lambda Z: moments(Z)[0], XQ))
    close(dvar, central(lambda Z: moments(Z)[1], XQ))


def test_the_fast_paths_mixture_gradient_weighs_every_draw():
    view, ys = _fast_view("matern52", 2.0, 9, Y[:, 1], mean_var=0.3)
    post = view.comp.post
    for i in (9, 10, 11):  # unequal weights
        post.append(X[i], ys[i])
    assert np.ptp(post.weights) > 0
    Xq = 2 * XQ
    mean, var, dmean, dvar = view.predict_grad(Xq)
    np.testing.assert_allclose(np.c_[mean, var], np.c_[view.predict(Xq)], rtol=1e-10)
    close(dmean, central(lambda Z: view.predict(Z)[0], Xq))
    close(dvar, central(lambda Z: view.predict(Z)[1], Xq))


@pytest.mark.parametrize("bound", ["lipschitz", "credible-box"])
@pytest.mark.parametrize("J_large", [False, True])  # every corner; 16 random box points
def test_the_generalized_bounds_have_their_gradients(bound, J_large):
    from pp_decomp.acquisition.ucb import CredibleBoxUCB, LipschitzUCB

    comps = [
        ComponentGP(k, 3).condition(X, Y[:, j], PLAIN)
        for j, k in enumerate(("se", "matern52", "se"))
    ]
    problem = _nonlinear_problem()
    if J_large:  # seven components: beyond the corners
        comps = comps + comps[:2] + comps[:2]
        problem = Problem(
            Box(np.zeros(3), np.ones(3)),
            n_components=7,
            g=lambda F, Z: F[..., 0] * F[..., 1] - (F[..., 2:] ** 2).sum(-1) + np.sin(Z[..., 0]),
        )
    model = DecomposedSurrogate(comps, problem)
    if bound == "lipschitz":
        acq = LipschitzUCB(model, 2.0, None, XQ)
    else:
        acq = CredibleBoxUCB(model, 2.0, seed=0)
    value, grad = acq.value_and_grad(XQ)
    np.testing.assert_allclose(value, acq(XQ), rtol=1e-10)
    close(grad, central(acq, XQ, h=1e-7), rtol=1e-4)


@pytest.mark.parametrize("rule", ["ei", "pi"])
@pytest.mark.parametrize("coupled", [False, True])
def test_the_monte_carlo_improvements_have_their_pathwise_gradients(rule, coupled):
    from pp_decomp.acquisition.improvement import ExpectedImprovement, ProbabilityOfImprovement

    comps = [
        ComponentGP(k, 3).condition(X, Y[:, j], PLAIN)
        for j, k in enumerate(("se", "matern52", "se"))
    ]
    problem = _nonlinear_problem()
    model = CopulaSurrogate(comps, problem) if coupled else DecomposedSurrogate(comps, problem)
    cls = ExpectedImprovement if rule == "ei" else ProbabilityOfImprovement
    # tau at a tenth of the spread: smooth enough for differences of 1e-7
    acq = cls(model, best=0.2, n_samples=128, seed=2, scale=1e5)
    assert acq.monte_carlo
    value, grad = acq.value_and_grad(XQ)
    np.testing.assert_allclose(value, acq(XQ), rtol=1e-10)
    close(grad, central(acq, XQ, h=1e-7), rtol=1e-4)


def test_a_users_pymc_model_in_many_dimensions_asks_on_differences(monkeypatch):
    """A user's ``from_pymc`` component has no input gradient: from 8 inputs on the
    maximiser finds so at the first start and climbs on differences, and the ask is
    made; with built-in kernels only, the same problem climbs on gradients."""
    import pymc as pm

    import pp_decomp as ppd

    d = maximizers.GRADIENT_MIN_DIM
    problem = Problem(
        Box(np.zeros(d), np.ones(d)),
        components=lambda Z: np.c_[np.sin(3 * Z[:, 0]) + Z[:, 1:].sum(1), np.cos(2 * Z[:, 2])],
        n_components=2,
        weights=[1.0, 0.5],
        name="eight",
    )

    def build(X, y):
        with pm.Model() as model:
            ls = pm.LogNormal("ls", mu=0.0, sigma=1.0, shape=d)
            eta = pm.Gamma("eta", alpha=2.0, beta=2.0)
            sigma = pm.LogNormal("sigma", mu=-3.0, sigma=1.0)
            gp = pm.gp.Marginal(cov_func=eta**2 * pm.gp.cov.Matern52(d, ls=ls))
            gp.marginal_likelihood("y_obs", X=X, y=y, sigma=sigma)
        return model, gp

    calls = {"differences": 0}
    fd = maximizers.value_and_fd_gradient

    def counted(f, u):
        calls["differences"] += 1
        return fd(f, u)

    monkeypatch.setattr(maximizers, "value_and_fd_gradient", counted)
    for own in (True, False):
        calls["differences"] = 0
        components = {"f0": ppd.ComponentGP.from_pymc(build)} if own else None
        opt = ppd.Optimizer(problem, "d-gpucb", inference="map", n_init=6, seed=0,
                            components=components)  # fmt: skip
        X0 = problem.domain.sample(6, seed=1)
        opt.tell(X0, problem.evaluate(X0, seed=0))
        x = opt.ask()
        assert problem.domain.contains(x[None])[0]
        assert (calls["differences"] > 0) == own
