"""Component GP models: the GP classes, their PyMC models, priors, densities and scaling."""
