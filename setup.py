"""Package discovery that cannot miss a subpackage.

Every package under ``pp_decomp/`` is found by ``find_packages``, and the
top-level ``models/`` folder (the design card's place for the problems) is
installed as ``pp_decomp.models`` with its own subpackages, so no bare
``models`` package lands in site-packages. Its ``data/`` folder (no Python)
is named as a package too, so setuptools installs its files without a warning
that it is an importable folder left out. Everything else lives in
``pyproject.toml``.
"""

from setuptools import find_packages, setup

MODELS = ["pp_decomp.models", "pp_decomp.models.data"] + [
    f"pp_decomp.models.{p}" for p in find_packages("models")
]

setup(
    packages=find_packages(include=["pp_decomp", "pp_decomp.*"]) + MODELS,
    package_dir={"pp_decomp.models": "models"},
)
