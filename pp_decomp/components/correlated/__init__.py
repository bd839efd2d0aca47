"""Correlated components: J outputs as one intrinsic-coregionalisation GP."""
