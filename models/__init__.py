"""Problems for pp_decomp, installed as ``pp_decomp.models``.

Each problem module gives an input domain, a component simulator returning J
outputs, the known composition ``g`` and, where it can be computed, the true
optimum. See DESIGN.md §3 for the problems and their real data.
"""
