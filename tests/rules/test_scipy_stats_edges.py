"""autodiff.scipy.stats at the edges of its distributions (issue 36 item 9): far tails, huge degrees of freedom,
boundaries of the support.  Values to a relative 1e-12 against mpmath at 60 digits (or scipy where it is exact
there); derivatives against mpmath's, and against finite differences (orders 1 and 2) where the function is
smooth."""

import mpmath
import numpy as np
import pytest
import scipy.stats

import autodiff
from autodiff import gradcheck
from autodiff.scipy import stats

mpmath.mp.dps = 60


def _t_logpdf(x, df):
    x, df = mpmath.mpf(x), mpmath.mpf(df)
    return (mpmath.loggamma((df + 1) / 2) - mpmath.loggamma(df / 2) - mpmath.log(df * mpmath.pi) / 2
            - (df + 1) / 2 * mpmath.log1p(x * x / df))


def _close(ours, exact, rtol=1e-12):
    exact = float(exact)
    assert abs(float(ours) - exact) <= rtol * abs(exact), (float(ours), exact)


@pytest.mark.parametrize("df", [3.0, 99.999, 100.0, 100.001, 1e3, 1e6, 1e12, 1e15, 1e20])
@pytest.mark.parametrize("x", [0.0, 0.3, 3.0, -40.0])
def test_t_logpdf_at_large_df(df, x):
    """The old difference of gammaln cancelled: relative error 1e-4 at df = 1e12 (the issue)."""
    mpmath.mp.dps = 60 if df < 1e16 else 120
    _close(stats.t.logpdf(x, df), _t_logpdf(x, df))
    mpmath.mp.dps = 60


def test_t_at_infinite_df_is_the_normal_as_in_scipy():
    x = np.array([-3.0, 0.0, 0.3, 5.0])
    np.testing.assert_allclose(stats.t.logpdf(x, np.inf), scipy.stats.norm.logpdf(x), rtol=1e-15)
    np.testing.assert_allclose(stats.t.logpdf(x, np.inf), scipy.stats.t.logpdf(x, np.inf), rtol=1e-15)
    np.testing.assert_allclose(autodiff.grad(lambda x: stats.t.logpdf(x, np.inf).sum())(x), -x, rtol=1e-15)


@pytest.mark.parametrize("df", [1e3, 1e6, 1e9])
def test_t_logpdf_df_derivatives_at_large_df_equal_mpmaths(df):
    x = 2.5
    first = autodiff.grad(stats.t.logpdf, argnums=1)(x, df)
    second = autodiff.grad(autodiff.grad(stats.t.logpdf, argnums=1), argnums=1)(x, df)
    _close(first, mpmath.diff(lambda v: _t_logpdf(x, v), df), rtol=1e-9)
    _close(second, mpmath.diff(lambda v: _t_logpdf(x, v), df, 2), rtol=1e-7)


@pytest.mark.parametrize("scale", [1e3, 1e6])
def test_t_logpdf_at_large_df_matches_finite_differences_orders_1_and_2(scale):
    """In ``u = df / scale`` so that the finite differences move df by a relative 1e-6."""
    x = np.array([0.3, 2.5])
    assert gradcheck(lambda u, x: stats.t.logpdf(x, scale * u), np.array([1.0, 1.3]), x, order=1)
    assert gradcheck(lambda u, x: stats.t.logpdf(x, scale * u), np.array([1.0, 1.3]), x, order=2)


def _cauchy_logpdf(x):
    return -mpmath.log(mpmath.pi) - mpmath.log1p(mpmath.mpf(x) ** 2)


@pytest.mark.parametrize("x", [1e200, -1e200, 1e155, 1e10, 1e8 * (1 + 1e-9), 1e8 * (1 - 1e-9), 3.0, 0.0])
def test_cauchy_logpdf_far_out(x):
    """``cauchy.logpdf(1e200)`` was -inf (z^2 overflowed); scipy gives -922."""
    _close(stats.cauchy.logpdf(x), _cauchy_logpdf(x))


@pytest.mark.parametrize("x", [1e200, 1e10, -1e8 * (1 + 1e-9), 40.0])
@pytest.mark.parametrize("df", [0.5, 3.0, 1e6])
def test_t_logpdf_far_out(x, df):
    _close(stats.t.logpdf(x, df), _t_logpdf(x, df))


@pytest.mark.parametrize("x", [-1e300, -1e10, -1.0 - 1e-12, -0.5, 0.0, 2.0, 1e10])
def test_cauchy_cdf_far_left_keeps_its_digits(x):
    mpmath.mp.dps = 700  # 1/2 + arctan(-1e300)/pi cancels 300 digits in the oracle too
    exact = mpmath.mpf(1) / 2 + mpmath.atan(mpmath.mpf(x)) / mpmath.pi
    mpmath.mp.dps = 60
    _close(stats.cauchy.cdf(x), exact)
    _close(stats.cauchy.logcdf(x), mpmath.log(exact))


def test_far_tail_derivatives_match_finite_differences_orders_1_and_2():
    """In ``u = x / far`` so that a finite difference moves ``x`` relatively; d/dx log density ~ -2/x there."""
    u = np.array([1.0, -1.3, 2.0])
    for far in (1e9, 1e150):
        assert gradcheck(lambda u, far=far: stats.cauchy.logpdf(far * u), u, order=2)
        assert gradcheck(lambda u, far=far: stats.t.logpdf(far * u, 3.0), u, order=2)
        np.testing.assert_allclose(autodiff.grad(lambda x: stats.cauchy.logpdf(x).sum())(far * u), -2 / (far * u),
                                   rtol=1e-14)
    assert gradcheck(lambda u: stats.cauchy.cdf(1e8 * u), -u, order=2)


@pytest.mark.parametrize("x", [800.0, -800.0, 1e300, 40.0])
def test_logistic_and_laplace_far_out(x):
    exact_logistic = -abs(mpmath.mpf(x)) - 2 * mpmath.log1p(mpmath.exp(-abs(mpmath.mpf(x))))
    _close(stats.logistic.logpdf(x), exact_logistic)
    _close(stats.laplace.logpdf(x), -abs(mpmath.mpf(x)) - mpmath.log(2))
    if x < 0:
        _close(stats.logistic.logcdf(x), -mpmath.log1p(mpmath.exp(-mpmath.mpf(x))))
        _close(stats.laplace.logcdf(x), mpmath.mpf(x) - mpmath.log(2))


def test_densities_at_the_edge_of_the_support_are_their_limits():
    """x^(a - 1) at x = 0 with a = 1 is 1: gamma, chi2 with df = 2, expon, beta and dirichlet alike."""
    _close(stats.gamma.logpdf(0.0, 1.0, 0.0, 2.0), -mpmath.log(2))
    _close(stats.chi2.logpdf(0.0, 2.0), -mpmath.log(2))
    _close(stats.expon.logpdf(0.0, 0.0, 3.0), -mpmath.log(3))
    _close(stats.beta.logpdf(0.0, 1.0, 3.0), mpmath.log(3))
    _close(stats.beta.logpdf(1.0, 2.5, 1.0), mpmath.log(2.5))
    x = np.array([0.0, 0.3, 0.7])
    alpha = np.array([1.0, 2.0, 3.5])
    exact = mpmath.loggamma(6.5) - mpmath.loggamma(2.0) - mpmath.loggamma(3.5) + mpmath.log(0.3) + 2.5 * mpmath.log(0.7)
    _close(stats.dirichlet.logpdf(x, alpha), exact)  # was -inf (the issue)
    _close(scipy.stats.dirichlet.logpdf(x, alpha), exact)
    assert stats.dirichlet.logpdf(x, np.array([2.0, 2.0, 3.5])) == -np.inf
    assert stats.dirichlet.logpdf(x, np.array([0.5, 2.0, 3.5])) == np.inf


def test_derivatives_at_the_edge_in_the_smooth_directions():
    """At x = 0 with a = 1 the density is smooth in the scale, in b (beta) and in the other alphas (dirichlet)."""
    assert gradcheck(lambda s: stats.gamma.logpdf(0.0, 1.0, 0.0, s), np.array([2.0, 0.5]), order=2)
    assert gradcheck(lambda b: stats.beta.logpdf(0.0, 1.0, b), np.array([3.0, 1.5]), order=2)
    x = np.array([0.0, 0.3, 0.7])
    assert gradcheck(lambda a: stats.dirichlet.logpdf(x, np.concatenate([[1.0], a])), np.array([2.0, 3.5]), order=2)
    g = autodiff.grad(lambda a: stats.dirichlet.logpdf(x, autodiff.numpy.concatenate([np.ones(1), a])))(
        np.array([2.0, 3.5]))
    log_pdf = [lambda a: mpmath.loggamma(4.5 + a) - mpmath.loggamma(a) + (a - 1) * mpmath.log(0.3),
               lambda a: mpmath.loggamma(3 + a) - mpmath.loggamma(a) + (a - 1) * mpmath.log(0.7)]
    exact = [mpmath.diff(log_pdf[0], 2.0), mpmath.diff(log_pdf[1], 3.5)]
    np.testing.assert_allclose(g, [float(e) for e in exact], rtol=1e-12)
