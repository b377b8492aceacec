"""Plain-value samplers beside the densities (issue 37): ``autodiff.scipy.stats.<dist>.rvs`` takes scipy's
arguments (parameters, ``size=``, ``random_state=`` a Generator, a seed or None) and draws what scipy draws
with the same seed, as a plain numpy array; traced parameters are read as their values (no gradient)."""

import numpy as np
import pytest
import scipy.stats

import autodiff
import autodiff.numpy as anp
from autodiff.scipy import stats

PARAMS = {
    "norm": (0.3, 1.5), "t": (3.5, 0.3, 1.5), "cauchy": (0.3, 1.5), "laplace": (0.3, 1.5), "logistic": (0.3, 1.5),
    "gamma": (2.5, 0.1, 1.5), "chi2": (3.0,), "beta": (2.0, 3.0), "expon": (0.1, 1.5), "poisson": (1.5,),
    "bernoulli": (0.3,), "binom": (4, 0.3), "dirichlet": (np.array([1.0, 2.0, 3.5]),),
    "multivariate_normal": (np.zeros(2), np.array([[2.0, 0.3], [0.3, 1.0]])),
    "multivariate_t": (np.zeros(2), np.array([[2.0, 0.3], [0.3, 1.0]]), 4.0),
}


def test_every_family_samples():
    assert sorted(PARAMS) == sorted(name for name in stats.__all__ if name != "Family")


@pytest.mark.parametrize("name", sorted(PARAMS))
@pytest.mark.parametrize("seed", [lambda: 7, lambda: np.random.default_rng(7)], ids=["int", "Generator"])
def test_draws_equal_scipys_with_the_same_seed(name, seed):
    ours = getattr(stats, name).rvs(*PARAMS[name], size=5, random_state=seed())
    theirs = getattr(scipy.stats, name).rvs(*PARAMS[name], size=5, random_state=seed())
    assert type(ours) is np.ndarray
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_without_a_seed_the_shape_is_scipys(name):
    assert getattr(stats, name).rvs(*PARAMS[name], size=(2, 3)).shape == np.shape(
        getattr(scipy.stats, name).rvs(*PARAMS[name], size=(2, 3)))


def test_keywords_pass_through():
    ours = stats.norm.rvs(loc=1.0, scale=2.0, size=3, random_state=1)
    np.testing.assert_array_equal(ours, scipy.stats.norm.rvs(loc=1.0, scale=2.0, size=3, random_state=1))


def test_traced_parameters_are_read_as_values_and_the_sample_has_no_gradient():
    seen = []

    def f(loc, scale):
        draw = stats.norm.rvs(loc, scale, size=3, random_state=np.random.default_rng(0))
        seen.append(draw)
        return anp.sum(draw * loc)  # the draw is a constant: d/dloc = sum(draw), d/dscale = 0

    g_loc, g_scale = autodiff.grad(f, argnums=(0, 1))(0.5, 2.0)
    (draw,) = seen
    assert type(draw) is np.ndarray
    np.testing.assert_array_equal(draw, scipy.stats.norm.rvs(0.5, 2.0, size=3, random_state=np.random.default_rng(0)))
    assert g_loc == pytest.approx(draw.sum(), rel=1e-15) and g_scale == 0.0


def test_a_reparametrised_sample_is_written_by_the_user():
    eps = stats.norm.rvs(size=4, random_state=3)
    g = autodiff.grad(lambda loc, scale: anp.sum(loc + scale * eps), argnums=1)(0.0, 1.0)
    assert g == pytest.approx(eps.sum(), rel=1e-15)


def test_under_vmap_it_is_refused_naming_the_fix():
    with pytest.raises(TypeError, match=r"stats\.norm\.rvs was called under vmap.*size=\(B, \.\.\.\)"):
        autodiff.vmap(lambda loc: stats.norm.rvs(loc, 1.0, random_state=0))(np.zeros(3))
