"""Inference of a component GP's hyperparameters: MAP, NUTS (nutpie) and importance sampling."""
