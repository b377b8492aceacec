"""HIPS autograd's ``tests/test_scipy.py``, ported: the same functions, argument positions, shapes and
domains, checked our way.

autograd's ``combo_check`` runs reverse mode to order 2 against finite differences over every combination of
the listed arguments; here :func:`check` does the same with ``gradcheck`` (orders 1 and 2), adds the JVP
against central differences (we have forward mode everywhere, autograd had it for few scipy functions), and
compares every value with scipy's own function on the same plain inputs.

Read differently from autograd (each noted at its case):
* ``erf``/``erfc`` are checked on the real line only: autodiff.scipy refuses complex input (its rules are
  derivatives along the real line); autograd also tries complex points.
* ``sqrtm`` takes a symmetric positive-definite matrix: autograd symmetrises a random matrix, whose negative
  eigenvalues give a complex root that autodiff.scipy refuses.
* ``solve_banded``'s band has its diagonal moved away from 0 (a random band can be nearly singular).
"""

import itertools

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.signal
import scipy.special
import scipy.stats

import autodiff
import autodiff.numpy as anp
from autodiff import gradcheck
from autodiff.scipy import integrate, signal, special, stats
from autodiff.scipy import linalg as spla

rng = np.random.default_rng(1)


@pytest.fixture(autouse=True)
def _same_draws_in_any_order():
    """Each case draws the same numbers whichever worker runs it, after whichever others."""
    rng.bit_generator.state = np.random.default_rng(1).bit_generator.state


def R(*shape):
    return rng.standard_normal(shape)


def U(low, high, size=None):
    return rng.uniform(low, high, size)


def positive(*shape):
    return R(*shape) ** 2 + 1.1


def _jvp_matches_differences(f, x):
    v = rng.standard_normal(np.shape(x))
    eps = 1e-6
    _, tangent = autodiff.jvp(f, (x,), (v,))
    np.testing.assert_allclose(tangent, (f(x + eps * v) - f(x - eps * v)) / (2 * eps), rtol=1e-5, atol=1e-7)


def check(fun, argnums, *arg_lists, reference=None, order=2, fwd=True, **kwarg_lists):
    """autograd's combo_check: every combination of the listed arguments, each ``argnums`` differentiated."""
    keys = list(kwarg_lists)
    for args in itertools.product(*arg_lists):
        for values in itertools.product(*kwarg_lists.values()):
            kwargs = dict(zip(keys, values))
            if reference is not None:
                np.testing.assert_allclose(fun(*args, **kwargs), reference(*args, **kwargs), rtol=1e-10, atol=1e-12)
            for i in argnums:
                def f(x, i=i, args=args, kwargs=kwargs):
                    return fun(*args[:i], x, *args[i + 1:], **kwargs)

                assert gradcheck(f, args[i], order=1)
                if order == 2:
                    assert gradcheck(f, args[i], order=2)
                if fwd:
                    _jvp_matches_differences(f, args[i])


def scipy_of(fun):
    """scipy's function of the same name (``stats.norm.logpdf`` -> ``scipy.stats.norm.logpdf``)."""
    module = scipy.stats if "." in fun.__qualname__ else scipy.special
    owner, _, name = fun.__qualname__.rpartition(".")
    return getattr(getattr(module, owner), name) if owner else getattr(module, name)


# --- stats -------------------------------------------------------------------------------------------------

UNIVARIATE = [
    ("chi2.pdf", [0], lambda: ([positive(4)], [1, 2, 3])),
    ("chi2.cdf", [0], lambda: ([positive(4)], [1, 2, 3])),
    ("chi2.logpdf", [0], lambda: ([positive(4)], [1, 2, 3])),
    ("beta.cdf", [0], lambda: ([U(0.0, 1.0, 4)], [positive(4)], [positive(4)])),
    ("beta.pdf", [0, 1, 2], lambda: ([U(0.0, 1.0, 4)], [positive(4)], [positive(4)])),
    ("beta.logpdf", [0, 1, 2], lambda: ([U(0.0, 1.0, 4)], [positive(4)], [positive(4)])),
    ("gamma.cdf", [0], lambda: ([positive(4)], [positive(4)])),
    ("gamma.pdf", [0, 1], lambda: ([positive(4)], [positive(4)])),
    ("gamma.logpdf", [0, 1], lambda: ([positive(4)], [positive(4)])),
    ("norm.pdf", [0, 1, 2], lambda: ([R(4)], [R(4)], [positive(4)])),
    ("norm.cdf", [0, 1, 2], lambda: ([R(4)], [R(4)], [positive(4)])),
    ("norm.sf", [0, 1, 2], lambda: ([R(4)], [R(4)], [positive(4)])),
    ("norm.logpdf", [0, 1, 2], lambda: ([R(4)], [R(4)], [positive(4)])),
    ("norm.logcdf", [0, 1, 2], lambda: ([R(4)], [R(4)], [positive(4)])),
    ("norm.logsf", [0, 1, 2], lambda: ([R(4)], [R(4)], [positive(4)])),
    ("norm.ppf", [0, 1, 2], lambda: ([U(0.05, 0.95, 4)], [R(4)], [positive(4)])),
    ("norm.isf", [0, 1, 2], lambda: ([U(0.05, 0.95, 4)], [R(4)], [positive(4)])),
    ("poisson.cdf", [1], lambda: ([np.round(R(4) ** 2)], [positive(4)])),
    ("poisson.logpmf", [1], lambda: ([np.round(R(4) ** 2)], [positive(4)])),
    ("poisson.pmf", [1], lambda: ([np.round(R(4) ** 2)], [positive(4)])),
    ("t.pdf", [0, 1, 2, 3], lambda: ([R(4)], [R(4) ** 2 + 2.1], [R(4)], [R(4) ** 2 + 2.1])),
    ("t.cdf", [0, 2], lambda: ([R(4)], [R(4) ** 2 + 2.1], [R(4)], [R(4) ** 2 + 2.1])),
    ("t.logpdf", [0, 1, 2, 3], lambda: ([R(4)], [R(4) ** 2 + 2.1], [R(4)], [R(4) ** 2 + 2.1])),
    ("t.logcdf", [0, 2], lambda: ([R(4)], [R(4) ** 2 + 2.1], [R(4)], [R(4) ** 2 + 2.1])),
]

BROADCAST = [  # autograd's *_broadcast cases (its norm_sf/logsf_broadcast call cdf/logcdf; so do these)
    ("norm.pdf", [0, 1, 2], lambda: ([R(4, 3)], [R(1, 3)], [R(4, 1) ** 2 + 1.1])),
    ("norm.cdf", [0, 1, 2], lambda: ([R(4, 3)], [R(1, 3)], [R(4, 1) ** 2 + 1.1])),
    ("norm.cdf", [0, 1, 2], lambda: ([R(4, 3)], [R(1, 3)], [R(4, 1) ** 2 + 1.1])),
    ("norm.logpdf", [0, 1, 2], lambda: ([R(4, 3)], [R(1, 3)], [R(4, 1) ** 2 + 1.1])),
    ("norm.logcdf", [0, 1, 2], lambda: ([R(4, 3)], [R(1, 3)], [R(4, 1) ** 2 + 1.1])),
    ("norm.logcdf", [0, 1, 2], lambda: ([R(4, 3)], [R(1, 3)], [R(4, 1) ** 2 + 1.1])),
    ("norm.ppf", [0, 1, 2], lambda: ([U(0.05, 0.95, (4, 3))], [R(1, 3)], [R(4, 1) ** 2 + 1.1])),
    ("norm.isf", [0, 1, 2], lambda: ([U(0.05, 0.95, (4, 3))], [R(1, 3)], [R(4, 1) ** 2 + 1.1])),
    ("poisson.cdf", [1], lambda: ([np.round(R(4, 3) ** 2)], [R(4, 1) ** 2 + 1.1])),
    ("poisson.logpmf", [1], lambda: ([np.round(R(4, 3) ** 2)], [R(4, 1) ** 2 + 1.1])),
    ("poisson.pmf", [1], lambda: ([np.round(R(4, 3) ** 2)], [R(4, 1) ** 2 + 1.1])),
    ("t.pdf", [0, 1, 2, 3], lambda: ([R(4, 3)], [R(1, 3) ** 2 + 2.1], [R(4, 3)], [R(4, 1) ** 2 + 2.1])),
    ("t.cdf", [0, 2], lambda: ([R(4, 3)], [R(1, 3) ** 2 + 2.1], [R(4, 3)], [R(4, 1) ** 2 + 2.1])),
    ("t.logpdf", [0, 1, 2, 3], lambda: ([R(4, 3)], [R(1, 3) ** 2 + 2.1], [R(4, 3)], [R(4, 1) ** 2 + 2.1])),
    ("t.logcdf", [0, 2], lambda: ([R(4, 3)], [R(1, 3) ** 2 + 2.1], [R(4, 3)], [R(4, 1) ** 2 + 2.1])),
]


def _method(name):
    family, method = name.split(".")
    return getattr(getattr(stats, family), method), getattr(getattr(scipy.stats, family), method)


@pytest.mark.parametrize("name, argnums, make", UNIVARIATE, ids=[c[0] for c in UNIVARIATE])
def test_univariate(name, argnums, make):
    ours, theirs = _method(name)
    check(ours, argnums, *make(), reference=theirs)


@pytest.mark.parametrize("name, argnums, make", BROADCAST, ids=[c[0] + "_broadcast" for c in BROADCAST])
def test_univariate_broadcast(name, argnums, make):
    ours, theirs = _method(name)
    check(ours, argnums, *make(), reference=theirs)


def make_psd(mat):
    return mat.T @ mat + np.eye(mat.shape[0])


def symmetrized(fun, argnum):
    """autograd's symmetrize_matrix_arg: the matrix argument enters as ``(X + X^T) / 2``."""

    def call(*args, **kwargs):
        args = list(args)
        args[argnum] = 0.5 * (args[argnum] + anp.swapaxes(args[argnum], -1, -2))
        return fun(*args, **kwargs)

    return call


mvn, smvn = stats.multivariate_normal, scipy.stats.multivariate_normal


@pytest.mark.parametrize("method", ["pdf", "logpdf"])
@pytest.mark.parametrize("x_shape", [(4,), (5, 4)], ids=["one", "broadcast"])
def test_mvn(method, x_shape):
    check(symmetrized(getattr(mvn, method), 2), [0, 1, 2], [R(*x_shape)], [R(4)], [make_psd(R(4, 4))],
          reference=getattr(smvn, method))


def test_mvn_entropy():
    check(symmetrized(mvn.entropy, 1), [0, 1], [10 * R(4)], [make_psd(R(4, 4))], reference=smvn.entropy)


@pytest.mark.parametrize("method", ["pdf", "logpdf"])
def test_mvn_singular_covariance(method):
    cov = np.diag([1.0, 1.0, 0.0, 0.0])  # no variance in the last two directions: x varies in the first two

    def on_support(fun):
        return lambda x, mean, cov: fun(anp.concatenate([x[:2], mean[2:]]), mean, cov, allow_singular=True)

    x, mean = np.concatenate((R(2), np.zeros(2))), np.concatenate((R(2), np.zeros(2)))
    check(on_support(symmetrized(getattr(mvn, method), 2)), [0, 1], [x], [mean], [cov],
          reference=on_support(getattr(smvn, method)))


ALPHA = rng.random(4) ** 2 + 1.2
X_SIMPLEX = stats.dirichlet.rvs(ALPHA, size=1, random_state=rng)[0]  # autograd draws x with rvs too


def normalized(fun):
    """x / sum(x): the simplex stays put while finite differences move x (autograd's normalize)."""
    return lambda x, alpha: fun(x / anp.sum(x), alpha)


@pytest.mark.parametrize("method", ["pdf", "logpdf"])
def test_dirichlet_x(method):
    check(normalized(getattr(stats.dirichlet, method)), [0], [X_SIMPLEX], [ALPHA],
          reference=normalized(getattr(scipy.stats.dirichlet, method)))


@pytest.mark.parametrize("method", ["pdf", "logpdf"])
def test_dirichlet_alpha(method):
    check(getattr(stats.dirichlet, method), [1], [X_SIMPLEX], [ALPHA], reference=getattr(scipy.stats.dirichlet, method))


# --- logsumexp (autograd checks these in forward mode too) -------------------------------------------------

LOGSUMEXP = [
    (lambda: [np.array([1.1]), R(4), R(3, 4)], {"axis": [None, 0], "keepdims": [True, False]}),
    (lambda: [R(3, 4), R(4, 5, 6), R(1, 5)], {"axis": [None, 0, 1], "keepdims": [True, False]}),
    (lambda: [R(4)], {"b": [np.exp(R(4))], "axis": [None, 0], "keepdims": [True, False]}),
    (lambda: [R(3, 4)], {"b": [np.exp(R(3, 4))], "axis": [None, 0, 1], "keepdims": [True, False]}),
    (lambda: [R(2, 3, 4)], {"b": [np.exp(R(2, 3, 4))], "axis": [None, 0, 1], "keepdims": [True, False]}),
]


@pytest.mark.parametrize("case", range(1, 6), ids=lambda i: f"logsumexp{i}")
def test_logsumexp(case):
    arrays, kwargs = LOGSUMEXP[case - 1]
    check(special.logsumexp, [0], arrays(), reference=scipy.special.logsumexp, **kwargs)


def test_logsumexp_of_its_own_gradient():
    x = R(1, 5)

    def f(a):
        return special.logsumexp(a, axis=1, keepdims=True)

    check(f, [0], [x])
    check(lambda a: autodiff.grad(lambda a: f(a).sum())(a), [0], [x])


# --- signal ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes", [
    [[(4,), (5,), (6,)], [(2,), (3,), (4,)]],
    [[(4, 3), (5, 4), (6, 7)], [(2, 2), (3, 2), (4, 2), (4, 1)]],
], ids=["1d", "2d"])
def test_convolve(shapes):
    firsts, seconds = ([R(*s) for s in group] for group in shapes)
    check(signal.convolve, [0, 1], firsts, seconds, mode=["full", "valid", "same"],
          reference=lambda a, b, mode: scipy.signal.convolve(a, b, mode, method="direct"))


def _by_slices(a, b, axes, dot_axes, mode):
    """The oracle for autograd's generalised convolve: scipy's convolve of every pair of slices, summed over the
    dot axes, laid out as (in1's kept axes, in2's kept axes, convolved axes)."""
    keep1 = [i for i in range(a.ndim) if i not in axes[0] and i not in dot_axes[0]]
    keep2 = [i for i in range(b.ndim) if i not in axes[1] and i not in dot_axes[1]]
    a = np.transpose(a, keep1 + list(dot_axes[0]) + list(axes[0]))
    b = np.transpose(b, keep2 + list(dot_axes[1]) + list(axes[1]))
    out = {}
    for i in np.ndindex(*a.shape[:len(keep1)]):
        for j in np.ndindex(*b.shape[:len(keep2)]):
            out[i + j] = sum(scipy.signal.convolve(a[i][d], b[j][d], mode, method="direct")
                             for d in np.ndindex(*a.shape[len(keep1):len(keep1) + len(dot_axes[0])]))
    first = next(iter(out.values()))
    result = np.empty(a.shape[:len(keep1)] + b.shape[:len(keep2)] + first.shape)
    for index, value in out.items():
        result[index] = value
    return result


def test_convolve_generalization():
    """autograd's own check of its axes/dot_axes convolve, against scipy's convolve and numpy's tensordot."""
    a35, a34, a342, a2543, a24232 = R(3, 5), R(3, 4), R(3, 4, 2), R(2, 5, 4, 3), R(2, 4, 2, 3, 2)
    for mode in ["valid", "full"]:
        np.testing.assert_allclose(signal.convolve(a35, a34, axes=([1], [0]), mode=mode)[1, 2],
                                   scipy.signal.convolve(a35[1, :], a34[:, 2], mode), rtol=1e-12)
        np.testing.assert_allclose(signal.convolve(a35, a34, axes=([], []), dot_axes=([0], [0]), mode=mode),
                                   np.tensordot(a35, a34, axes=([0], [0])), rtol=1e-12)
        np.testing.assert_allclose(signal.convolve(a35, a342, axes=([1], [2]), dot_axes=([0], [0]), mode=mode)[2],
                                   sum(scipy.signal.convolve(a35[i, :], a342[i, 2, :], mode) for i in range(3)),
                                   rtol=1e-12)
        np.testing.assert_allclose(
            signal.convolve(a2543, a24232, axes=([1, 2], [2, 4]), dot_axes=([0, 3], [0, 3]), mode=mode)[2],
            sum(scipy.signal.convolve(a2543[i, :, :, j], a24232[i, 2, :, j, :], mode)
                for i in range(2) for j in range(3)), rtol=1e-12)


@pytest.mark.parametrize("axes", [([0], [0]), ([1], [1]), ([0], [1]), ([1], [0]), ([0, 1], [0, 1]), ([1, 0], [1, 0])])
def test_convolve_ignore(axes):
    check(lambda a, b, mode: signal.convolve(a, b, axes=axes, mode=mode), [0, 1], [R(4, 3)], [R(3, 2)],
          mode=["full", "valid", "same"], reference=lambda a, b, mode: _by_slices(a, b, axes, ((), ()), mode))


@pytest.mark.parametrize("dot_axes", [([0], [2]), ([0], [0])])
def test_convolve_ignore_dot(dot_axes):
    check(lambda a, b, mode: signal.convolve(a, b, axes=([1], [1]), dot_axes=dot_axes, mode=mode), [0, 1],
          [R(3, 3, 2)], [R(3, 2, 3)], mode=["full", "valid", "same"],
          reference=lambda a, b, mode: _by_slices(a, b, ([1], [1]), dot_axes, mode))


# --- special -----------------------------------------------------------------------------------------------

SPECIAL = [
    ("beta", [0, 1], lambda: ([positive(4)], [positive(4)])),
    ("betainc", [2], lambda: ([positive(4)], [positive(4)], [U(0.0, 1.0, 4)])),
    ("betaln", [0, 1], lambda: ([positive(4)], [positive(4)])),
    ("gammainc", [1], lambda: ([1.0], [R(4) ** 2 + 1.3])),
    ("gammaincc", [1], lambda: ([1.0], [R(4) ** 2 + 1.3])),
    ("polygamma", [1], lambda: ([0], [R(4) ** 2 + 1.3])),
    ("jn", [1], lambda: ([2], [R(4) ** 2 + 1.3])),
    ("yn", [1], lambda: ([2], [R(4) ** 2 + 1.3])),
    ("multigammaln", [0], lambda: ([U(4.0, 5.0), U(4.0, 5.0, (2, 3))], [1, 2, 3])),
    ("iv", [1], lambda: ([U(1.0, 50.0, 4)], [R(4) ** 2 + 1.3])),
    ("ive", [1], lambda: ([U(1.0, 50.0, 4)], [R(4) ** 2 + 1.3])),
]


@pytest.mark.parametrize("name, argnums, make", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special(name, argnums, make):
    check(getattr(special, name), argnums, *make(), reference=getattr(scipy.special, name))


UNARY = [  # autograd's unary_ufunc_check: a 2x3 array (and a scalar) drawn inside lims
    ("psi", (0.3, 2.0)), ("digamma", (0.3, 2.0)), ("gamma", (0.3, 2.0)), ("gammaln", (0.3, 2.0)),
    ("gammasgn", (0.3, 2.0)), ("rgamma", (0.3, 2.0)), ("j0", (0.2, 20.0)), ("j1", (0.2, 20.0)),
    ("y0", (0.2, 20.0)), ("y1", (0.2, 20.0)), ("i0", (0.2, 20.0)), ("i1", (0.2, 20.0)),
    ("erf", (-3.0, 3.0)), ("erfc", (-3.0, 3.0)),  # real points only: see the module's note
    ("erfinv", (-0.95, 0.95)), ("erfcinv", (0.05, 1.95)), ("logit", (0.10, 0.90)), ("expit", (-4.05, 4.95)),
]


@pytest.mark.parametrize("name, lims", UNARY, ids=[c[0] for c in UNARY])
def test_unary(name, lims):
    low, high = lims
    check(getattr(special, name), [0], [U(low, high, (2, 3)), U(low, high)], reference=getattr(scipy.special, name))


# --- the ODE integrator ------------------------------------------------------------------------------------

def rhs(y, t, arg1, arg2):
    return -anp.sqrt(t) - y + arg1 - anp.mean((y + arg2) ** 2)


def test_odeint():
    """y0, the times and the args tuple (a structure: its gradient is a tuple) are each differentiated."""

    def solve(y0, t, args):
        return integrate.odeint(rhs, y0, t, args, rtol=1e-11, atol=1e-11)

    def reference(y0, t, args):
        a1, a2 = args
        return scipy.integrate.odeint(lambda y, t: -np.sqrt(t) - y + a1 - np.mean((y + a2) ** 2), y0, t,
                                      rtol=1e-11, atol=1e-11)

    y0, t, args = R(3), np.linspace(0.1, 0.2, 4), (R(3), R(3))
    np.testing.assert_allclose(solve(y0, t, args), reference(y0, t, args), rtol=1e-9, atol=1e-10)
    assert gradcheck(solve, y0, t, args, eps=1e-4, rtol=1e-4, atol=1e-7)  # the adaptive solver's noise
    assert gradcheck(lambda y0, args: solve(y0, t, args), y0, args, order=2, rtol=1e-4, atol=1e-7)


# --- linalg ------------------------------------------------------------------------------------------------

def test_sqrtm():
    """A symmetric positive-definite matrix (autograd symmetrises a random one: see the module's note)."""
    check(symmetrized(spla.sqrtm, 0), [0], [make_psd(R(3, 3))], reference=lambda a: scipy.linalg.sqrtm(0.5 * (a + a.T)))


def test_solve_sylvester():
    check(spla.solve_sylvester, [0, 1, 2], [R(3, 3)], [R(3, 3)], [R(3, 3)], reference=scipy.linalg.solve_sylvester)


def test_solve_banded():
    ab = R(3, 5)
    ab[1] += 4.0  # autograd's draw, its diagonal moved away from 0 so the finite differences stay well-posed
    check(lambda l_and_u, ab, b: spla.solve_banded(l_and_u, ab, b), [1, 2], [(1, 1)], [ab], [R(5)], order=1,
          reference=scipy.linalg.solve_banded)
