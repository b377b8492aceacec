"""Domains and cases for the op table's issue-23 rows (autodiff.scipy).

Each domain maps standard-normal draws inside the function's domain, away from the edges where a
derivative blows up (so float32 finite differences stay meaningful).
"""

import hypothesis.strategies as st
import numpy as np

import autodiff.numpy as anp
from autodiff.scipy import stats
from autodiff.scipy.integrate import odeint

COUNTS = np.array([0.0, 1.0, 3.0])


def open_unit(x):
    """Inside (0.05, 0.95)."""
    return 0.05 + 0.9 / (1.0 + np.exp(-x))


def moderate(x):
    """Inside (-2, 2): the Bessel and error functions grow fast beyond it."""
    return 2.0 * np.tanh(x / 2.0)


def small(x):
    """A matrix of norm well below 1, for expm."""
    return 0.3 * np.tanh(x)


def near_identity(x):
    """Eigenvalues near 2, far from the negative axis, for sqrtm and logm."""
    return 0.2 * np.tanh(x) + 2.0 * np.eye(x.shape[-1])


def spd(a):
    n = np.shape(a)[-1]
    return a @ anp.swapaxes(a, -1, -2) + n * np.eye(n, dtype=anp.result_type(a))


def well_conditioned(a):
    return a + 3.0 * np.eye(np.shape(a)[-1], dtype=anp.result_type(a))


def positive_of(x):
    """A positive function of a traced value (for parameters drawn over the whole line)."""
    return anp.exp(x) + 0.5


@st.composite
def triangular_case(draw):
    shapes = draw(st.sampled_from([((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1)), ((1, 1), (1,))]))
    kwargs = {"trans": draw(st.sampled_from([0, 1, "T", "N"])), "lower": draw(st.booleans()),
              "unit_diagonal": draw(st.booleans())}
    return shapes, kwargs


matrix = st.sampled_from([((3, 3),), ((2, 2),), ((1, 1),)])


def pivoted(x):
    """Near 4 times the reversal permutation: LU must swap rows, and the pivots stay put under small moves."""
    return 0.1 * x + 4.0 * np.eye(x.shape[-1])[::-1] if x.ndim >= 2 else x


@st.composite
def signal_case(draw):
    """1-D and 2-D pairs, either one the larger (``valid`` needs one at least as large in every axis)."""
    shapes = draw(st.sampled_from([((5,), (3,)), ((2,), (4,)), ((4, 5), (2, 3)), ((2, 2), (3, 4)), ((3, 3), (3, 1))]))
    return shapes, {"mode": draw(st.sampled_from(["full", "same", "valid"]))}



ODE_TIMES = np.array([0.0, 0.4])


def ode_net(y, t, w):
    """autograd's ode_net-style dynamics on a 2-d state: a one-layer tanh network with time-dependent damping."""
    return anp.tanh(w @ y) - 0.5 * t * y


def odeint_net(y0, w):
    """A short solve (one output interval of 0.4 time units: the order-2 gradcheck costs two nested adjoint
    solves per interval, 20 examples a row; several intervals are checked at order 2 in
    tests/rules/test_scipy_integrate.py), tight enough (1e-12) that the solver's own error stays far below what
    finite differences resolve: an adaptive solve moves by about its tolerance / eps under a step of eps, so 1e-10
    left errors near 1e-4 at order 2 (seed 9343 failed); the gradcheck sees the rules, not the solver."""
    return odeint(ode_net, y0, ODE_TIMES, (w,), rtol=1e-12, atol=1e-12)


def other_continuous_forms(x, s):
    """The pdf, sf, logsf and remaining cdf forms, summed: one gradcheck for the compositions over logpdf/cdf."""
    x, scale = anp.exp(x * 0.5) + 0.1, positive_of(s)  # x > 0 keeps every family inside its support
    return (stats.norm.pdf(x, 0.2, scale) + stats.norm.sf(x, 0.2, scale) + stats.norm.logsf(x, 0.2, scale)
            + stats.cauchy.cdf(x, 0.2, scale) + stats.laplace.cdf(x, 0.2, scale) + stats.logistic.cdf(x, 0.2, scale)
            + stats.t.pdf(x, 3.5, 0.2, scale) + stats.t.logcdf(x, 3.5, 0.2, scale)
            + stats.gamma.sf(x, 2.5, 0.0, scale) + stats.gamma.logcdf(x, 2.5, 0.0, scale)
            + stats.expon.logsf(x, 0.0, scale) + stats.expon.logcdf(x, 0.0, scale) + stats.expon.pdf(x, 0.0, scale)
            + stats.beta.pdf(anp.tanh(x) * 0.9, 2.0, 3.0))


def other_discrete_forms(p):
    """pmf forms and the binomial logcdf, in the success probability ``p``."""
    k = np.array([0, 1, 3])
    return (stats.poisson.pmf(k, p * 4.0) + stats.bernoulli.pmf(np.array([0, 1, 1]), p)
            + stats.binom.pmf(k, 4, p) + stats.binom.logcdf(k, 4, p))
