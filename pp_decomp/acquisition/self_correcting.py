"""A self-correcting D-GPUCB: a bonus where the hyperparameter draws disagree.

Full Bayes keeps S hyperparameter draws per component. Where the draws predict
alike, observing ``f_j(x)`` teaches nothing about the hyperparameters; where they
disagree it does. The bonus measures that disagreement in the objective's units:

``a(x) = D-GPUCB(x) + √β_t √(Σ_j g_j(x)² T_j(x))``,
``T_j(x) = v̄_j(x) − exp(E_s log v_js(x))``, ``v̄_j = E_s v_js + Var_s μ_js``

with ``μ_js, v_js`` component ``j``'s posterior mean and variance of the latent
``f_j(x)`` under draw ``s`` and ``g_j`` the linear composition's weights. With
``I_j = ½ log v̄_j − ½ E_s log v_js`` the moment-matched mutual information
between ``f_j(x)`` and the hyperparameters (BALD's, over the mixture of draws;
Houlsby et al. 2011, Riis et al. 2022), ``T_j = v̄_j (1 − e^{−2 I_j})``: the part
of the predictive variance the hyperparameters explain. ``T_j ≥ 0`` (the mixture
variance bounds the mean variance, which bounds the geometric mean), it is 0 for
one draw (MAP: the acquisition is D-GPUCB's) and fades as the posterior
concentrates. The components' bonuses add as independent variances (a copula's
correlation is not applied to them).
"""

from __future__ import annotations

import numpy as np

from pp_decomp.acquisition.surrogate import DecomposedSurrogate
from pp_decomp.acquisition.ucb import DGPUCB
from pp_decomp.validate import check_nonnegative


def hyperparameter_variance(mean_s: np.ndarray, var_s: np.ndarray) -> np.ndarray:
    """``T = E_s v_s + Var_s μ_s − exp(E_s log v_s)`` from per-draw means and variances
    ``(S, m)``: ``(m,)``, clipped at 0 against rounding.

    Examples
    --------
    >>> import numpy as np
    >>> hyperparameter_variance(np.array([[0.0], [2.0]]), np.array([[1.0], [4.0]]))
    array([1.5])
    >>> hyperparameter_variance(np.array([[1.0]]), np.array([[3.0]]))  # one draw
    array([0.])
    """
    v = np.maximum(var_s, np.finfo(float).tiny)
    mixture = v.mean(0) + mean_s.var(0)
    return np.maximum(mixture - np.exp(np.log(v).mean(0)), 0.0)


class SelfCorrectingUCB:
    """D-GPUCB with the hyperparameter bonus of :mod:`pp_decomp.acquisition.self_correcting`.

    Parameters
    ----------
    model : DecomposedSurrogate
        Fitted component GPs with a linear ``g`` (``problem.weights``).
    beta : float
        ``β_t``, shared by the bound and the bonus.

    Example
    -------
    >>> import numpy as np
    >>> import pp_decomp as ppd
    >>> from pp_decomp.acquisition.surrogate import decomposed_surrogate
    >>> from pp_decomp.models import get_problem
    >>> p = get_problem("synthetic", seed=0, n_components=2, n_points=60)
    >>> X = p.domain.X[::6]
    >>> Y = p.evaluate(X, seed=0)
    >>> gps = [ppd.ComponentGP(bounds=p.domain.bounds).fit(X, Y[:, j], "map") for j in range(2)]
    >>> model = decomposed_surrogate(gps, p)
    >>> a = SelfCorrectingUCB(model, beta=4.0)
    >>> bool(np.allclose(a(p.domain.X), ppd.acquisition.DGPUCB(model, 4.0)(p.domain.X)))
    True
    """

    def __init__(self, model: DecomposedSurrogate, beta: float):
        self.base = DGPUCB(model, beta)
        self.model, self.beta = model, check_nonnegative(beta, "beta")

    def bonus(self, X) -> np.ndarray:
        """``√β √(Σ_j g_j(x)² T_j(x))`` at ``X (m, d)``: (m,)."""
        G = self.model.linear.weights(X)  # (m, J) or (J,)
        T = np.stack([hyperparameter_variance(m, v) for m, v in self.model.per_draw(X)], -1)
        return np.sqrt(self.beta) * np.sqrt(np.sum(np.asarray(G) ** 2 * T, axis=-1))

    def __call__(self, X) -> np.ndarray:
        return self.base(X) + self.bonus(X)
