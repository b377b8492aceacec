"""autodiff.scipy at the domain edges the issue names, its errors, routing of plain scipy calls, and
values of the functions torch lacks (against scipy, with gradients against finite differences)."""

import importlib
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.integrate as si
import scipy.linalg as sl
import scipy.signal as sg
import scipy.special as ss
import scipy.stats as sst

import autodiff
import autodiff.scipy.linalg as la
import autodiff.scipy.special as sp
import autodiff.scipy.stats as st

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")


def _torch_grad(f, x):
    t = torch.tensor(x, requires_grad=True)
    f(t).sum().backward()
    return t.grad.numpy()


# --- domain edges ---------------------------------------------------------------------------------

def test_logsumexp_of_minus_infinity_entries_has_finite_value_and_gradient_zero_there():
    a = np.array([[0.5, -np.inf, 1.5], [-np.inf, -np.inf, -np.inf]])
    out = sp.logsumexp(a, axis=1)
    np.testing.assert_array_equal(out, ss.logsumexp(a, axis=1))
    g = autodiff.grad(lambda x: sp.logsumexp(x, axis=1)[0])(a)
    np.testing.assert_allclose(g[0], _torch_grad(lambda t: torch.logsumexp(t, 0), a[0]), rtol=1e-12)
    all_minus_inf = autodiff.grad(lambda x: sp.logsumexp(x, axis=1)[1])(a)
    np.testing.assert_array_equal(all_minus_inf, np.zeros_like(a))  # torch gives NaN here; 0 is the subgradient


def test_logsumexp_b_and_return_sign_follow_scipy():
    a, b = np.array([0.3, 1.2, -0.4]), np.array([1.0, -2.0, 0.5])
    value, sign = sp.logsumexp(a, b=b, return_sign=True)
    ref_value, ref_sign = ss.logsumexp(a, b=b, return_sign=True)
    np.testing.assert_allclose(value, ref_value, rtol=1e-13)
    assert sign == ref_sign == -1.0
    assert autodiff.gradcheck(lambda a, b: sp.logsumexp(a, b=b, return_sign=True)[0], a, b, order=2)


def test_xlogy_at_zero_zero_is_zero_with_gradient_zero_in_x():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 0.5])
    np.testing.assert_array_equal(sp.xlogy(x, y), ss.xlogy(x, y))
    gx = autodiff.grad(lambda x: sp.xlogy(x, y).sum())(x)
    np.testing.assert_allclose(gx, _torch_grad(lambda t: torch.special.xlogy(t, torch.tensor(y)), x), rtol=1e-15)
    assert gx[0] == 0.0 and np.all(np.isfinite(gx))
    assert autodiff.gradcheck(lambda y: sp.xlogy(x[1:], y), y[1:], order=2)
    gy = autodiff.grad(lambda y: sp.xlogy(x, y).sum())(y)
    assert gy[0] == 0.0 and gy[1] == 0.0  # x = 0: xlogy does not depend on y


@pytest.mark.parametrize("x", [1e5, 1e15, 1e30])
def test_gammaln_at_large_arguments_is_finite_and_matches_torch(x):
    np.testing.assert_allclose(sp.gammaln(x), ss.gammaln(x), rtol=1e-14)
    g = autodiff.grad(sp.gammaln)(x)
    np.testing.assert_allclose(g, _torch_grad(torch.lgamma, np.array(x)), rtol=1e-12)
    h = autodiff.grad(autodiff.grad(sp.gammaln))(x)
    assert np.isfinite(h) and h > 0
    np.testing.assert_allclose(h, 1.0 / x, rtol=1e-4)  # trigamma(x) = 1/x + O(1/x^2)


def test_log_ndtr_at_minus_forty_has_finite_value_and_gradient():
    x = np.array([-40.0, -10.0, 0.0, 5.0])
    np.testing.assert_allclose(sp.log_ndtr(x), ss.log_ndtr(x), rtol=1e-14)
    g = autodiff.grad(lambda x: sp.log_ndtr(x).sum())(x)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, _torch_grad(torch.special.log_ndtr, x), rtol=1e-10)
    h = autodiff.grad(lambda x: autodiff.grad(lambda y: sp.log_ndtr(y).sum())(x).sum())(x)
    assert np.all(np.isfinite(h))
    assert autodiff.gradcheck(sp.log_ndtr, x, order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_t_cdf_at_and_near_its_centre_has_the_density_as_its_derivative(dtype):
    """Through betainc of df / (df + z^2) this was NaN at x = loc and 50 times off in float32 beside it."""
    x = np.array([0.0, -1e-9, 1e-3, 2.5], dtype=dtype)
    g = autodiff.grad(lambda x: st.t.cdf(x, 3.5).sum())(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, sst.t.pdf(x.astype(np.float64), 3.5), rtol=1e-6 if dtype == np.float32 else 1e-13)
    h = autodiff.grad(lambda x: autodiff.grad(lambda y: st.t.cdf(y, 3.5).sum())(x).sum())(x)
    np.testing.assert_allclose(h, autodiff.grad(lambda x: st.t.pdf(x, 3.5).sum())(x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(st.t.cdf(x, 3.5, 0.2, 1.3), sst.t.cdf(x, 3.5, 0.2, 1.3), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="stdtr: the derivative in the shape parameter df"):
        autodiff.grad(lambda df: st.t.cdf(0.3, df))(3.5)


def test_nearly_singular_covariance_is_refused_clearly_not_nan():
    v = np.array([[1.0, 2.0, 3.0]])
    cov = v.T @ v + 1e-14 * np.eye(3)  # rank one, up to rounding
    with pytest.raises(ValueError, match=r"multivariate_normal.*singular.*1e-6 \* np.eye"):
        st.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), cov)
    with pytest.raises(np.linalg.LinAlgError):  # scipy refuses it too
        sst.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), cov)
    with pytest.raises(ValueError, match="multivariate_t.*not positive semi-definite"):
        st.multivariate_t.logpdf(np.zeros(2), np.zeros(2), -np.eye(2), 3.0)


def test_outside_the_support_is_minus_infinity_with_gradient_zero():
    x = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_array_equal(st.gamma.logpdf(x, 2.0), sst.gamma.logpdf(x, 2.0))
    np.testing.assert_array_equal(st.beta.logpdf(x, 2.0, 3.0), sst.beta.logpdf(x, 2.0, 3.0))
    for f in (lambda x: st.gamma.logpdf(x, 2.0), lambda x: st.beta.logpdf(x, 2.0, 3.0), st.expon.logpdf):
        g = autodiff.grad(lambda x, f=f: f(x).sum())(x)  # the value is -inf; the gradient is not NaN
        assert g[0] == 0.0 and np.isfinite(g).all() and g[1] != 0.0


# --- errors ---------------------------------------------------------------------------------------

def test_shape_derivative_of_incomplete_gamma_and_beta_raises_naming_the_function():
    for f, name in [(lambda a: sp.gammainc(a, 2.0), "gammainc"), (lambda a: sp.gammaincc(a, 2.0), "gammaincc"),
                    (lambda a: sp.betainc(a, 2.0, 0.3), "betainc")]:
        with pytest.raises(NotImplementedError, match=f"{name}: the derivative in the shape parameter a"):
            autodiff.grad(f)(1.5)
    with pytest.raises(NotImplementedError, match="gamma.*stop_gradient"):
        autodiff.grad(lambda a: st.gamma.cdf(1.0, a))(2.0)


def test_polygamma_refuses_a_non_integer_order():
    with pytest.raises(ValueError, match="polygamma: n must be a non-negative integer"):
        sp.polygamma(1.5, 2.0)


def test_a_missing_distribution_method_names_what_the_family_has():
    with pytest.raises(AttributeError, match=r"stats.cauchy has no 'ppf'; it has logpdf, pdf, cdf, logcdf"):
        _ = st.cauchy.ppf


def test_sqrtm_of_a_matrix_with_a_negative_eigenvalue_is_refused():
    with pytest.raises(ValueError, match="sqrtm: the result for this real matrix is complex"):
        la.sqrtm(np.diag([1.0, -4.0]))


# --- routing of plain scipy.special calls -----------------------------------------------------------

ROUTED = ["gammaln", "digamma", "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit", "entr",
          "i0", "i1", "i0e", "i1e"]


@pytest.mark.parametrize("name", ROUTED)
def test_plain_scipy_special_ufunc_on_traced_values_uses_our_rule(name):
    x = np.array([0.3, 0.6])
    theirs = autodiff.grad(lambda x: getattr(ss, name)(x).sum())(x)
    ours = autodiff.grad(lambda x: getattr(sp, name)(x).sum())(x)
    np.testing.assert_array_equal(theirs, ours)
    assert np.all(theirs != 0)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py", "betaln", "gammainc", "gammaincc", "betainc", "stdtr"])
def test_plain_scipy_ufuncs_of_several_arguments_route_too(name):
    first = (np.array([1.5, 2.5]),) * (2 if name == "betainc" else 1)
    y = np.array([0.3, 0.6])
    theirs = autodiff.grad(lambda y: getattr(ss, name)(*first, y).sum())(y)
    np.testing.assert_array_equal(theirs, autodiff.grad(lambda y: getattr(sp, name)(*first, y).sum())(y))
    assert np.all(theirs != 0)


SCIPY_CALLS = {  # scipy's pure-Python functions on a traced value: (call, the name the error gives, ours or None)
    "special.logsumexp": (lambda x: ss.logsumexp(x), "scipy.special.logsumexp", "autodiff.scipy.special.logsumexp"),
    "special.polygamma": (lambda x: ss.polygamma(1, x), "scipy.special.polygamma", "autodiff.scipy.special.polygamma"),
    "special.softmax": (lambda x: ss.softmax(x), "scipy.special.softmax", None),
    "special.comb": (lambda x: ss.comb(x, 1), "scipy.special.comb", None),
    "stats.norm.logpdf": (lambda x: sst.norm.logpdf(x), "scipy.stats.norm.logpdf", "autodiff.scipy.stats.norm.logpdf"),
    "stats frozen": (lambda x: sst.norm(0.0, 2.0).logpdf(x), "scipy.stats.norm.logpdf",
                     "autodiff.scipy.stats.norm.logpdf"),
    "stats.t.cdf": (lambda x: sst.t.cdf(x, 3.0), "scipy.stats.t.cdf", "autodiff.scipy.stats.t.cdf"),
    "stats.cauchy.ppf": (lambda x: sst.cauchy.ppf(x), "scipy.stats.cauchy.ppf", None),
    "stats.poisson.logpmf": (lambda x: sst.poisson.logpmf(1, x), "scipy.stats.poisson.logpmf",
                             "autodiff.scipy.stats.poisson.logpmf"),
    "stats.multivariate_normal": (lambda x: sst.multivariate_normal.logpdf(x, np.zeros(2)),
                                  "scipy.stats.multivariate_normal.logpdf",
                                  "autodiff.scipy.stats.multivariate_normal.logpdf"),
    "stats.dirichlet": (lambda x: sst.dirichlet.logpdf(x, np.ones(2)), "scipy.stats.dirichlet.logpdf",
                        "autodiff.scipy.stats.dirichlet.logpdf"),
    "stats.entropy": (lambda x: sst.entropy(x), "scipy.stats.entropy", None),
    "linalg.expm": (lambda x: sl.expm(x[:, None] * x), "scipy.linalg.expm", "autodiff.scipy.linalg.expm"),
    "linalg.solve_triangular": (lambda x: sl.solve_triangular(np.eye(2), x), "scipy.linalg.solve_triangular",
                                "autodiff.scipy.linalg.solve_triangular"),
    "linalg.cholesky (a decorated function)": (lambda x: sl.cholesky(x[:, None] * x + np.eye(2)),
                                               "scipy.linalg.cholesky", "autodiff.scipy.linalg.cholesky"),
    "linalg.cho_solve": (lambda x: sl.cho_solve((np.eye(2), True), x), "scipy.linalg.cho_solve",
                         "autodiff.scipy.linalg.cho_solve"),
    "linalg.block_diag": (lambda x: sl.block_diag(x, x), "scipy.linalg.block_diag", "autodiff.scipy.linalg.block_diag"),
    "linalg.det": (lambda x: sl.det(x[:, None] * x), "scipy.linalg.det", None),
    "signal.convolve": (lambda x: sg.convolve(x, x), "scipy.signal.convolve", "autodiff.scipy.signal.convolve"),
    "integrate.odeint": (lambda x: si.odeint(lambda y, t: -y, x, [0.0, 1.0]), "scipy.integrate.odeint",
                         "autodiff.scipy.integrate.odeint"),
}


@pytest.mark.parametrize("name", list(SCIPY_CALLS))
def test_a_scipy_python_function_on_traced_values_raises_naming_it_and_ours(name):
    call, theirs, ours = SCIPY_CALLS[name]
    with pytest.raises(TypeError, match=re.escape(f"{theirs} was called on a traced value")) as caught:
        autodiff.grad(lambda x: call(x).sum())(np.array([0.3, 0.6]))
    message = str(caught.value)
    if ours is not None:
        assert f"Use {ours} instead" in message
        obj = importlib.import_module(".".join(ours.split(".")[:3]))
        for attr in ours.split(".")[3:]:
            obj = getattr(obj, attr)  # the counterpart the error points at exists
    else:
        assert "autodiff.scipy has no counterpart of it" in message


def test_a_scipy_function_inside_an_odeint_right_hand_side_is_the_one_named():
    """The innermost run of scipy frames is the culprit, not the solver that called the user's function."""
    from autodiff.scipy.integrate import odeint

    with pytest.raises(TypeError, match="scipy.special.logsumexp was called"):
        autodiff.grad(lambda y0: odeint(lambda y, t: -ss.logsumexp(y) * y, y0, np.array([0.0, 0.1])).sum())(
            np.ones(2))


def test_user_code_converting_a_traced_value_inside_scipy_optimize_gets_the_plain_message():
    """scipy.optimize.minimize calls the user's objective: a conversion there is the user's, not minimize's."""
    from scipy.optimize import minimize

    def objective(x):
        return autodiff.value_and_grad(lambda x: float(np.asarray(x).sum()))(x)

    with pytest.raises(TypeError, match="numpy tried to convert a traced value") as caught:
        minimize(objective, np.ones(2), jac=True)
    assert "scipy.optimize" not in str(caught.value)


@pytest.mark.parametrize("call", [lambda x: ss.dawsn(x), lambda x: ss.gammaln(x, out=np.empty(2))],
                         ids=["unrouted ufunc", "out="])
def test_an_unrouted_scipy_ufunc_form_raises_naming_it(call):
    with pytest.raises(TypeError, match=r"scipy\.special\.(dawsn|gammaln)\b"):
        autodiff.grad(lambda x: call(x).sum())(np.array([0.3, 0.6]))


def test_plain_scipy_special_routes_without_importing_autodiff_scipy_first():
    """A scipy.special ufunc loads our routes on first use: no import of autodiff.scipy needed."""
    code = ("import sys, numpy as np, scipy.special as ss, autodiff; assert 'autodiff.scipy' not in sys.modules; "
            "print(float(autodiff.grad(lambda x: ss.gammaln(x))(3.0)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert float(out.stdout) == pytest.approx(ss.digamma(3.0), rel=1e-14)


# --- functions torch lacks: values against scipy ------------------------------------------------------

def test_values_of_functions_torch_lacks_match_scipy():
    rng = np.random.default_rng(3)
    x, m = rng.standard_normal((4, 3)), rng.standard_normal(3)
    a = rng.standard_normal((3, 3))
    shape = a @ a.T + np.eye(3)
    np.testing.assert_allclose(st.multivariate_t.logpdf(x, m, shape, 4.5),
                               sst.multivariate_t.logpdf(x, m, shape, 4.5), rtol=1e-12)
    z = np.linspace(-3, 3, 7)
    for fam in ("logpdf", "cdf", "logcdf"):
        np.testing.assert_allclose(getattr(st.logistic, fam)(z, 0.2, 1.3), getattr(sst.logistic, fam)(z, 0.2, 1.3),
                                   rtol=1e-12)
        np.testing.assert_allclose(getattr(st.t, fam)(z, 2.5, 0.2, 1.3), getattr(sst.t, fam)(z, 2.5, 0.2, 1.3),
                                   rtol=1e-10)
    near = 0.2 * np.tanh(a) + 2 * np.eye(3)
    np.testing.assert_allclose(la.sqrtm(near), sl.sqrtm(near), rtol=1e-12)
    np.testing.assert_allclose(la.logm(near), sl.logm(near), rtol=1e-10)
    np.testing.assert_allclose(sp.betainc(1.5, 2.5, 0.3), ss.betainc(1.5, 2.5, 0.3), rtol=1e-14)
    np.testing.assert_allclose(sp.polygamma(3, z + 4), ss.polygamma(3, z + 4), rtol=1e-13)


def test_float32_stays_float32_with_default_arguments():
    x = np.linspace(0.1, 2.0, 4).astype(np.float32)
    for f in (st.norm.logpdf, st.norm.cdf, st.laplace.logpdf, st.logistic.logpdf, st.expon.logpdf,
              lambda x: st.gamma.logpdf(x, 2.0), lambda x: st.t.logpdf(x, 3.0), lambda x: sp.polygamma(2, x),
              lambda x: sp.gammainc(1.7, x), lambda x: sp.logsumexp(x, axis=0, keepdims=True)):
        out, pullback = autodiff.vjp(f, x)
        assert out.dtype == np.float32 and pullback(np.ones_like(out))[0].dtype == np.float32


# --- signal ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes", [((5,), (3,)), ((3,), (5,)), ((4, 5), (2, 3)), ((2, 3), (4, 5)), ((4, 3), (2, 3))])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_values_equal_scipys(shapes, mode):
    import scipy.signal as sg

    import autodiff.scipy.signal as sig

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    np.testing.assert_allclose(sig.convolve(a, b, mode), sg.convolve(a, b, mode), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(sig.correlate(a, b, mode), sg.correlate(a, b, mode), rtol=1e-12, atol=1e-14)


def test_signal_errors_name_the_function_and_the_fix():
    import autodiff.scipy.signal as sig

    with pytest.raises(ValueError, match="convolve: mode must be one of"):
        sig.convolve(np.ones(3), np.ones(2), "circular")
    with pytest.raises(ValueError, match="correlate: mode='valid' needs one input at least as large"):
        sig.correlate(np.ones((2, 5)), np.ones((3, 2)), "valid")
    with pytest.raises(NotImplementedError, match="convolve2d: only boundary='fill'.*autodiff.numpy.pad"):
        sig.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap")


# --- the op table's issue-23 rows (their gradchecks, orders 1 and 2, in tests/rules/test_op_table.py) -------

def _scipy_rows():
    from tests.op_table import OPS

    first = next(i for i, op in enumerate(OPS) if op.name == "special.gammaln")
    return OPS[first:]


# --- complex input: refused, naming the function (autodiff.scipy differentiates real inputs only) ----------

@pytest.mark.parametrize("op", _scipy_rows(), ids=repr)
def test_every_function_refuses_a_complex_input_naming_itself(op):
    from hypothesis import given, settings
    from hypothesis import strategies as hs

    group = op.name.split(".")[0]  # special, stats, linalg, signal, integrate

    @settings(max_examples=1, deadline=None, derandomize=True)
    @given(case=op.cases, seed=hs.integers(0, 2**16))
    def check(case, seed):
        shapes, kwargs = case
        r = np.random.default_rng(seed)
        args = [op.domain(r.standard_normal(s)) + 0.5j * r.standard_normal(s) for s in shapes]
        pattern = rf"autodiff\.scipy\.{group}\.[\w.]+: got a complex input \(complex128\); autodiff\.scipy " \
                  r"differentiates real inputs only"
        with pytest.raises(TypeError, match=pattern):
            op.fn(*args, **kwargs)
        with pytest.raises(TypeError, match=pattern):  # traced: never a number in the wrong convention
            autodiff.vjp(lambda *xs: op.fn(*xs, **kwargs), *args)

    check()


def test_a_complex_constant_with_a_real_traced_input_is_refused_too():
    with pytest.raises(TypeError, match="autodiff.scipy.special.erf: got a complex input"):
        autodiff.grad(lambda x: sp.erf(x + 1j).real.sum())(np.ones(2))
    with pytest.raises(TypeError, match="autodiff.scipy.special.erf: got a complex input"):
        autodiff.grad(lambda x: ss.erf(x * (1 + 1j)).real.sum())(np.ones(2))  # scipy's ufunc routes to ours


# --- documentation ---------------------------------------------------------------------------------------------

def test_every_public_function_has_a_runnable_example_that_doctest_collects():
    import doctest
    import pkgutil

    import autodiff.scipy as asp

    modules = [asp] + [importlib.import_module(m.name) for m in pkgutil.walk_packages(asp.__path__, "autodiff.scipy.")]
    collected = {t.docstring for m in modules for t in doctest.DocTestFinder().find(m) if t.examples}
    public = {f"{sub}.{name}": getattr(getattr(asp, sub), name) for sub in asp.__all__
              for name in getattr(asp, sub).__all__}
    assert len(public) >= 55
    assert [name for name, obj in public.items() if obj.__doc__ not in collected] == []
