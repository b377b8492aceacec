"""autodiff.scipy.stats at invalid parameters and off the support (issue 36 item 8).

The rule (docs/scipy.md): an invalid parameter gives NaN in every method, as scipy does; a point off the
support gives the value at the support's edge (-inf log-density, 0 density, cdf 0 or 1), as scipy does.
Every family, every method, against scipy.stats on the same inputs.  The masks are double ``where``s:
gradients at the valid entries are those computed without the invalid ones, never NaN, under vmap too.
"""

import numpy as np
import pytest
import scipy.stats

import autodiff
import autodiff.numpy as anp
from autodiff.scipy import stats

NAN = np.nan

# family: (a point inside the support, valid parameters, {parameter: invalid values})
FAMILIES = {
    "norm": (0.7, {"loc": 0.3, "scale": 1.5}, {"scale": [-1.0, 0.0, NAN]}),
    "t": (0.7, {"df": 3.5, "loc": 0.3, "scale": 1.5}, {"df": [-1.0, 0.0], "scale": [-1.0, 0.0]}),
    "cauchy": (0.7, {"loc": 0.3, "scale": 1.5}, {"scale": [-1.0, 0.0]}),
    "laplace": (0.7, {"loc": 0.3, "scale": 1.5}, {"scale": [-1.0, 0.0]}),
    "logistic": (0.7, {"loc": 0.3, "scale": 1.5}, {"scale": [-1.0, 0.0]}),
    "gamma": (0.7, {"a": 2.5, "loc": 0.1, "scale": 1.5}, {"a": [-1.0, 0.0], "scale": [-1.0, 0.0]}),
    "chi2": (0.7, {"df": 3.0, "loc": 0.1, "scale": 1.5}, {"df": [-1.0, 0.0], "scale": [-2.0]}),
    "beta": (0.3, {"a": 2.0, "b": 3.0, "loc": 0.0, "scale": 1.0}, {"a": [-1.0, 0.0], "b": [0.0], "scale": [-1.0]}),
    "expon": (0.7, {"loc": 0.1, "scale": 1.5}, {"scale": [-1.0, 0.0]}),
    "poisson": (2, {"mu": 1.5}, {"mu": [-1.0, NAN]}),
    "bernoulli": (1, {"p": 0.3}, {"p": [-0.1, 1.5]}),
    "binom": (1, {"n": 4, "p": 0.3}, {"n": [2.5, -1.0], "p": [-0.5, 1.5]}),
}

# family: points off the support (and on its edges, where scipy's value is the limit)
OFF_SUPPORT = {
    "gamma": [-1.0, 0.1, 0.05], "chi2": [-1.0, 0.1], "expon": [-1.0, 0.1], "beta": [-0.5, 0.0, 1.0, 1.5],
    "poisson": [-1, 2.5, 0], "bernoulli": [-1, 2, 0.5, 0], "binom": [-1, 5, 2.5, 4, 0],
}

QUANTILE_METHODS = ("ppf", "isf")


def _methods(family):
    return [m for m in getattr(stats, family)._methods if m != "rvs"]


def _cases():
    for family, (point, params, bad) in FAMILIES.items():
        for method in _methods(family):
            for name, values in bad.items():
                for value in values:
                    yield pytest.param(family, method, point, dict(params, **{name: value}),
                                       id=f"{family}.{method}-{name}={value}")


def _call(module, family, method, point, params):
    at = 0.3 if method in QUANTILE_METHODS else point
    return getattr(getattr(module, family), method)(at, **params)


@pytest.mark.parametrize("family, method, point, params", _cases())
def test_an_invalid_parameter_gives_nan_in_every_method_as_scipy(family, method, point, params):
    assert np.isnan(_call(stats, family, method, point, params))
    # scipy's binom.logcdf(1, n=-1, p) is 0 although its cdf there is NaN: the one case where scipy is not
    # NaN itself, and the cdf is its oracle
    oracle = "cdf" if (family, method, params.get("n")) == ("binom", "logcdf", -1.0) else method
    assert np.isnan(_call(scipy.stats, family, oracle, point, params))


def _off_cases():
    for family, points in OFF_SUPPORT.items():
        params = FAMILIES[family][1]
        for method in _methods(family):
            if method not in QUANTILE_METHODS:
                for x in points:
                    yield pytest.param(family, method, x, params, id=f"{family}.{method}({x})")


@pytest.mark.parametrize("family, method, x, params", _off_cases())
def test_off_the_support_every_method_equals_scipy(family, method, x, params):
    ours = getattr(getattr(stats, family), method)(x, **params)
    theirs = getattr(getattr(scipy.stats, family), method)(x, **params)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)


@pytest.mark.parametrize("family", ["gamma", "chi2", "expon", "beta"])
def test_off_the_support_gradients_are_zero_not_nan(family):
    """Strictly outside (below ``loc``, beyond ``loc + scale`` for beta) beside a point inside: every parameter's
    gradient is finite, and the point's is 0 where it is outside."""
    point, params = FAMILIES[family][0], FAMILIES[family][1]
    x = np.array([-1.0, point, 1.5 if family == "beta" else -2.0])
    g = autodiff.grad(lambda x: getattr(stats, family).logpdf(x, **params).sum())(x)
    assert g[0] == 0.0 and g[2] == 0.0 and np.isfinite(g[1]) and g[1] != 0.0
    for name in params:
        def inside(v, name=name):
            return getattr(stats, family).logpdf(x, **dict(params, **{name: v}))[1]

        assert np.isfinite(autodiff.grad(inside)(float(params[name])))


def _mixed_cases():
    for family, (point, params, bad) in FAMILIES.items():
        for name, values in bad.items():
            if name != "n":  # a count is data, not differentiated
                yield pytest.param(family, point, params, name, values[0], id=f"{family}-{name}")


def _log_density(family):
    fam = getattr(stats, family)
    return fam.logpmf if hasattr(fam, "logpmf") and "logpmf" in fam._methods else fam.logpdf


@pytest.mark.parametrize("family, point, params, name, bad", _mixed_cases())
def test_valid_entries_keep_their_values_and_gradients_beside_invalid_ones(family, point, params, name, bad):
    """The double where: the invalid entry is NaN with gradient 0, the valid one is as if computed alone."""
    logp = _log_density(family)

    def f(v):
        return logp(point, **dict(params, **{name: v}))

    good = float(params[name])
    both = np.array([good, bad])
    values = f(both)
    assert values[0] == f(good) and np.isnan(values[1])
    g = autodiff.grad(lambda v: anp.where(np.isnan(values), 0.0, f(v)).sum())(both)
    np.testing.assert_array_equal(g, [autodiff.grad(f)(good), 0.0])
    if family not in ("poisson", "bernoulli", "binom"):  # continuous: the point's gradient too

        def at(x):
            return anp.where(np.isnan(values), 0.0, logp(x, **dict(params, **{name: both}))).sum()

        gx = autodiff.grad(at)(np.array([point, point], dtype=float))
        assert np.isfinite(gx).all() and gx[1] == 0.0 and gx[0] == autodiff.grad(lambda x: logp(x, **params))(point)


@pytest.mark.parametrize("family, point, params, name, bad", _mixed_cases())
def test_under_vmap_each_example_is_judged_on_its_own(family, point, params, name, bad):
    logp = _log_density(family)

    def f(v):
        return logp(point, **dict(params, **{name: v}))

    both = np.array([float(params[name]), bad])
    out = autodiff.vmap(f)(both)
    np.testing.assert_array_equal(out, f(both))
    grads = autodiff.vmap(autodiff.grad(f))(both)
    assert grads[0] == autodiff.grad(f)(both[0]) and grads[1] == 0.0


def test_the_issues_examples():
    assert np.isnan(stats.bernoulli.logpmf(1, p=1.5))  # was +0.405
    assert np.isnan(stats.binom.logpmf(1, 2.5, 0.5))  # was finite
    assert np.isnan(stats.norm.logpdf(0.0, 0.0, -1.0))  # was -inf
    assert stats.dirichlet.logpdf(np.array([0.5, 0.6]), np.array([1.0, 2.0])) == -np.inf  # off the simplex


def test_dirichlet_and_multivariate_t_give_nan_where_scipy_raises():
    """scipy raises for these (its checks are not elementwise); the one rule here is NaN for an invalid
    parameter and -inf off the support, so a batch of points or parameters never stops at one bad entry."""
    x = np.array([[0.2, 0.5], [0.3, 0.6], [0.5, 0.1]])  # the second column sums to 1.2
    with pytest.raises(ValueError):
        scipy.stats.dirichlet.logpdf(x, np.array([1.0, 2.0, 3.0]))
    out = stats.dirichlet.logpdf(x, np.array([1.0, 2.0, 3.0]))
    assert out[0] == pytest.approx(scipy.stats.dirichlet.logpdf(x[:, 0], np.array([1.0, 2.0, 3.0])), rel=1e-14)
    assert out[1] == -np.inf
    assert np.isnan(stats.dirichlet.logpdf(x[:, 0], np.array([1.0, -2.0, 3.0])))
    g = autodiff.grad(lambda a: stats.dirichlet.logpdf(x, a)[0])(np.array([1.0, 2.0, 3.0]))
    assert np.isfinite(g).all()
    with pytest.raises(ValueError):
        scipy.stats.multivariate_t.logpdf(np.zeros(2), np.zeros(2), np.eye(2), -1.0)
    assert np.isnan(stats.multivariate_t.logpdf(np.zeros(2), np.zeros(2), np.eye(2), -1.0))


def test_a_quantile_outside_zero_one_is_nan_as_scipy():
    q = np.array([-0.1, 0.0, 0.3, 1.0, 1.1])
    np.testing.assert_array_equal(stats.norm.ppf(q), scipy.stats.norm.ppf(q))
    np.testing.assert_array_equal(stats.norm.isf(q), scipy.stats.norm.isf(q))
