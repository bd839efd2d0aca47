"""BOFN's EI-FN on BoTorch, the network peer (:mod:`pp_decomp.peers.network`); needs the
compare extra (``make test-compare``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.models.networks import alpine2_network

pytestmark = pytest.mark.compare


def test_the_peer_runs_a_network_and_its_paths_interpolate_the_nodes():
    import torch
    from botorch.utils.sampling import draw_sobol_normal_samples

    from pp_decomp.peers.network import _fit_nodes, _paths

    p = alpine2_network(n_nodes=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = ppd.Optimizer(p, strategy="botorch-ei-fn", n_init=6, seed=0).run(9)
    X, Y = ds["x"].values, ds["y"].values
    assert np.all(p.domain.contains(X)) and len(np.unique(X, axis=0)) == 9
    net = p.metadata["network"]
    lower, width = p.domain.lower, p.domain.upper - p.domain.lower
    gps, scales = _fit_nodes(net, X, Y, lower, width, torch)
    z = draw_sobol_normal_samples(3, 64, seed=0).numpy()
    F = _paths(net, gps, scales, X, z, lower, width, torch)
    # at the evaluated inputs a fixed-noise GP per node passes through its data, and each
    # child is sampled at its parents' near-exact values
    np.testing.assert_allclose(F.mean(0), Y, atol=0.05 * np.abs(Y).max())
