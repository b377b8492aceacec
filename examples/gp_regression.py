"""Gaussian-process regression with hyperparameters fitted by ``scipy.optimize.minimize(jac=True)``.

The negative log marginal likelihood is ``-multivariate_normal.logpdf(y, 0, K(theta))`` from
``autodiff.scipy.stats`` (a Cholesky factor and a triangular solve inside), and ``value_and_grad``
hands scipy its value and gradient in one call.  The prediction uses ``cho_factor``/``cho_solve``.
The gradient equals Rasmussen & Williams' closed form (eq. 5.9) and the fitted hyperparameters equal
those a gradient-free search finds on ``scipy.stats``' own log-density (tests/models/test_scipy_examples.py).

Run: ``python examples/gp_regression.py`` or ``python -m examples.gp_regression``.
"""

import os
import sys

if not __package__:  # run as a script (python examples/NAME.py): import this checkout's packages
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
from scipy.optimize import minimize

import autodiff
import autodiff.numpy as anp
from autodiff.scipy import linalg as sla
from autodiff.scipy.stats import multivariate_normal

JITTER = 1e-8  # keeps K positive definite to working precision when the noise is fitted small


def data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-4.0, 4.0, n))
    return x, np.sin(x) + 0.3 * x + 0.2 * rng.standard_normal(n)


def kernel(a, b, log_amplitude, log_length):
    """The squared-exponential kernel ``s^2 exp(-(a - b)^2 / (2 l^2))`` with ``s``, ``l`` in logs."""
    sq = (a[:, None] - b[None, :]) ** 2
    return anp.exp(2.0 * log_amplitude - 0.5 * sq * anp.exp(-2.0 * log_length))


def covariance(theta, x):
    """``K + sigma^2 I`` for ``theta = (log s, log l, log sigma)``."""
    return kernel(x, x, theta[0], theta[1]) + (anp.exp(2.0 * theta[2]) + JITTER) * np.eye(len(x))


def neg_log_marginal_likelihood(theta, x, y):
    return -multivariate_normal.logpdf(y, np.zeros(len(x)), covariance(theta, x))


def fit(x, y, theta0=(0.0, 0.0, -1.0)):
    """Hyperparameters by L-BFGS-B, value and gradient from one ``value_and_grad`` call per step."""
    value_and_grad = autodiff.value_and_grad(neg_log_marginal_likelihood)

    def objective(theta):
        value, grad = value_and_grad(theta, x, y)
        return float(value), grad

    result = minimize(objective, np.array(theta0), jac=True, method="L-BFGS-B", options={"gtol": 1e-9})
    return result.x, result


def predict(theta, x, y, x_new):
    """Posterior mean and standard deviation at ``x_new``."""
    factor = sla.cho_factor(covariance(theta, x), lower=True)
    cross = kernel(x, x_new, theta[0], theta[1])
    mean = cross.T @ sla.cho_solve(factor, y)
    var = np.exp(2.0 * theta[0]) - anp.sum(cross * sla.cho_solve(factor, cross), axis=0)
    return mean, anp.sqrt(anp.maximum(var, 0.0))


def main(plot=True):
    x, y = data()
    theta, result = fit(x, y)
    s, length, noise = np.exp(theta)
    print(f"fitted amplitude {s:.3f}, length-scale {length:.3f}, noise {noise:.3f} "
          f"({result.nit} L-BFGS-B steps, -log p(y) = {result.fun:.4f})")
    if plot:
        from examples._plot import pyplot, save

        grid = np.linspace(-5.0, 5.0, 200)
        mean, sd = predict(theta, x, y, grid)
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.fill_between(grid, mean - 2 * sd, mean + 2 * sd, alpha=0.25, label="posterior ± 2 sd")
        ax.plot(grid, mean, label="posterior mean")
        ax.plot(x, y, "k.", label="data")
        ax.set_xlabel("x")
        ax.legend(loc="upper left")
        print("saved", save(fig, "gp_regression"))


if __name__ == "__main__":
    main()
