"""Peers run side by side with pp_decomp's strategies, on the same instances and seeds.

They are strategies like any other (``botorch-composite``, ``botorch-gp-ucb``),
available when the optional extra ``pp-decomp[compare]`` (BoTorch on PyTorch)
is installed; BoTorch is never a core dependency.
"""


def botorch_available() -> bool:
    """Whether BoTorch can be imported (the ``compare`` extra)."""
    from importlib.util import find_spec

    return find_spec("botorch") is not None and find_spec("torch") is not None
