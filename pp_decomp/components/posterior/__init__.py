"""Hyperparameter draws and the batched GP posterior over them."""
