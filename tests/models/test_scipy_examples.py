"""The autodiff.scipy examples against independent answers (closed forms, scipy without our gradients)."""

import numpy as np
import scipy.stats as sst
from scipy.optimize import minimize

import autodiff
from examples import bbvi, gp_regression

# --- Gaussian-process regression --------------------------------------------------------------------

def _plain_covariance(theta, x):
    s2, l2, n2 = np.exp(2 * np.asarray(theta))
    sq = (x[:, None] - x[None, :]) ** 2
    return s2 * np.exp(-0.5 * sq / l2), n2


def _closed_form_gradient(theta, x, y):
    """Rasmussen & Williams eq. 5.9: d(-log p)/d theta_j = -1/2 tr((a a^T - K^-1) dK/d theta_j)."""
    k_f, n2 = _plain_covariance(theta, x)
    k = k_f + (n2 + gp_regression.JITTER) * np.eye(len(x))
    k_inv = np.linalg.inv(k)
    a = k_inv @ y
    sq = (x[:, None] - x[None, :]) ** 2
    derivatives = [2 * k_f, k_f * sq * np.exp(-2 * theta[1]), 2 * n2 * np.eye(len(x))]
    return np.array([-0.5 * np.trace((np.outer(a, a) - k_inv) @ d) for d in derivatives])


def test_gp_gradient_equals_the_closed_form():
    x, y = gp_regression.data()
    for theta in ([0.0, 0.0, -1.0], [0.3, 0.8, -2.0], [-0.5, -0.2, -0.7]):
        theta = np.array(theta)
        value, grad = autodiff.value_and_grad(gp_regression.neg_log_marginal_likelihood)(theta, x, y)
        k_f, n2 = _plain_covariance(theta, x)
        cov = k_f + (n2 + gp_regression.JITTER) * np.eye(len(x))
        np.testing.assert_allclose(value, -sst.multivariate_normal.logpdf(y, np.zeros(len(x)), cov), rtol=1e-12)
        np.testing.assert_allclose(grad, _closed_form_gradient(theta, x, y), rtol=1e-8, atol=1e-10)


def test_gp_hyperparameters_equal_a_gradient_free_fit_of_scipys_log_density():
    x, y = gp_regression.data()
    theta, result = gp_regression.fit(x, y)
    assert result.success and np.abs(result.jac).max() < 1e-5

    def plain_objective(t):
        k_f, n2 = _plain_covariance(t, x)
        return -sst.multivariate_normal.logpdf(y, np.zeros(len(x)), k_f + (n2 + gp_regression.JITTER) * np.eye(len(x)))

    reference = minimize(plain_objective, np.zeros(3), method="Nelder-Mead",
                         options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 20000}).x
    np.testing.assert_allclose(theta, reference, atol=1e-4)


def test_gp_prediction_equals_the_closed_form_posterior():
    x, y = gp_regression.data()
    theta = np.array([0.1, 0.6, -1.5])
    x_new = np.linspace(-5, 5, 7)
    mean, sd = gp_regression.predict(theta, x, y, x_new)
    k_f, n2 = _plain_covariance(theta, x)
    k = k_f + (n2 + gp_regression.JITTER) * np.eye(len(x))
    s2, l2 = np.exp(2 * theta[0]), np.exp(2 * theta[1])
    cross = s2 * np.exp(-0.5 * (x[:, None] - x_new[None, :]) ** 2 / l2)
    np.testing.assert_allclose(mean, cross.T @ np.linalg.solve(k, y), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sd ** 2, s2 - np.sum(cross * np.linalg.solve(k, cross), axis=0), rtol=1e-7,
                               atol=1e-12)


# --- black-box variational inference ------------------------------------------------------------------

def test_bbvi_log_joint_equals_scipys():
    x, y = bbvi.data()
    w = np.random.default_rng(0).standard_normal((5, 2))
    expected = sst.norm.logpdf(w).sum(1) + sst.bernoulli.logpmf(y, 1 / (1 + np.exp(-w @ x.T))).sum(1)
    np.testing.assert_allclose(bbvi.log_joint(w, x, y), expected, rtol=1e-12)


def test_bbvi_reaches_the_elbo_optimum_found_by_quadrature_without_autodiff():
    x, y = bbvi.data()
    lam, _ = bbvi.fit(x, y)
    reference = bbvi.reference_optimum(x, y)
    np.testing.assert_allclose(lam[:2], reference[:2], atol=0.02)
    np.testing.assert_allclose(bbvi.covariance_of(lam), bbvi.covariance_of(reference), atol=0.02)
    gap = bbvi.quadrature_elbo(reference, x, y) - bbvi.quadrature_elbo(lam, x, y)
    assert 0 <= gap < 1e-3
    mean, cov, _ = bbvi.exact_posterior_moments(x, y)  # a nearly Gaussian posterior: q's mean is close to it
    np.testing.assert_allclose(lam[:2], mean, atol=0.05)
