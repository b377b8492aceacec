"""Conventions at kinks (design.md section 11, issue 36 item 2): one table, every spelling of a function at
its kink, at first and second order, in every mode.

The oracles:
- first order, reverse (``grad``) and forward (``jacfwd``): the documented value: 0 for every norm at 0 (the
  subgradient of least norm; ``std`` at a constant vector is the norm of its centred values), ``+inf`` for
  ``sqrt`` and ``cbrt`` at 0 (the one-sided derivative);
- second order, in the four ways to nest the two modes: for a smooth composite through the kink (``norm**2``,
  ``std**2``, ``hypot**2`` ...) the true Hessian, computed from its smooth form (``sum(x * x)``, ``var``), or
  all-NaN, never another finite number; for the kinked function itself, NaN for a Euclidean norm (its Hessian
  grows like ``1/|x|``: no value to give) and 0 for a piecewise-linear one (``norm(x, 1)``, ``abssum``: 0 on
  every side, PyTorch's and JAX's value too).

PyTorch is compared where its answer comes from no LAPACK call (the SVD's norms are left out).
"""

import numpy as np
import pytest

import autodiff.nn.functional as F
import autodiff.numpy as anp
from autodiff import abssum, grad, gradcheck, hessian, jacfwd, jacrev, jvp, maxabs, scaled, sumsq, vmap
from tests.internals import inverse_norm
from traversal import total

Z2, Z3, Z23, CONST = np.zeros(2), np.zeros(3), np.zeros((2, 3)), np.full(4, 1.5)
CONST23 = np.array([[1.0, 1.0, 1.0], [-2.0, -2.0, -2.0]])  # each row constant


def _modulus(f):
    """``f`` of the complex number ``x[0] + 1j x[1]``: a function of real arguments, so it has a Hessian."""
    return lambda x: f(anp.reshape(x[0] + 1j * x[1], (1,)))


def _total_norm(x):
    return total(anp.linalg.norm, {"w": x, "act": np.tanh, "steps": 3})


def _total_scaled_norm(x):
    return total(scaled(2.0, anp.linalg.norm), [x])


# name: (function, kink point, its smooth square or None, that square's smooth form)
EUCLIDEAN = {
    "norm": (anp.linalg.norm, Z3, lambda x: anp.linalg.norm(x) ** 2, sumsq),
    "norm(x, 2)": (lambda x: anp.linalg.norm(x, 2), Z3, lambda x: anp.linalg.norm(x, 2) ** 2, sumsq),
    "norm(x, keepdims)": (lambda x: anp.sum(anp.linalg.norm(x, keepdims=True)), Z3,
                          lambda x: anp.sum(anp.linalg.norm(x, keepdims=True) ** 2), sumsq),
    "norm(x, 2, axis=0)": (lambda x: anp.linalg.norm(x, 2, axis=0), Z3,
                           lambda x: anp.linalg.norm(x, 2, axis=0) ** 2, sumsq),
    "norm(X)": (anp.linalg.norm, Z23, lambda x: anp.linalg.norm(x) ** 2, sumsq),
    "norm(X, 'fro')": (lambda x: anp.linalg.norm(x, "fro"), Z23, lambda x: anp.linalg.norm(x, "fro") ** 2, sumsq),
    "norm(X, axis=(0, 1))": (lambda x: anp.linalg.norm(x, axis=(0, 1)), Z23,
                             lambda x: anp.linalg.norm(x, axis=(0, 1)) ** 2, sumsq),
    "norm(X, 'fro', keepdims)": (lambda x: anp.sum(anp.linalg.norm(x, "fro", axis=(0, 1), keepdims=True)), Z23,
                                 lambda x: anp.sum(anp.linalg.norm(x, "fro", axis=(0, 1), keepdims=True) ** 2), sumsq),
    "norm(X, axis=0)": (lambda x: anp.sum(anp.linalg.norm(x, axis=0)), Z23,
                        lambda x: anp.sum(anp.linalg.norm(x, axis=0) ** 2), sumsq),
    "norm(X, axis=1, keepdims)": (lambda x: anp.sum(anp.linalg.norm(x, axis=1, keepdims=True)), Z23,
                                  lambda x: anp.sum(anp.linalg.norm(x, axis=1, keepdims=True) ** 2), sumsq),
    "norm(x, 3)": (lambda x: anp.linalg.norm(x, 3), Z3, lambda x: anp.linalg.norm(x, 3) ** 3,
                   lambda x: anp.sum(anp.abs(x) ** 3)),
    "norm(x, 1.5)": (lambda x: anp.linalg.norm(x, 1.5), Z3, None, None),
    "norm(row, 'nuc')": (lambda x: anp.linalg.norm(x[None, :], "nuc"), Z3,
                         lambda x: anp.linalg.norm(x[None, :], "nuc") ** 2, sumsq),  # one row: the 2-norm
    "norm(row, 2)": (lambda x: anp.linalg.norm(x[None, :], 2), Z3,
                     lambda x: anp.linalg.norm(x[None, :], 2) ** 2, sumsq),
    "norm(X, 'nuc')": (lambda x: anp.linalg.norm(x, "nuc"), Z23, None, None),
    "norm(X, 2)": (lambda x: anp.linalg.norm(x, 2), Z23, None, None),
    "norm(X, -2)": (lambda x: anp.linalg.norm(x, -2), Z23, None, None),
    "hypot": (lambda x: anp.hypot(x[0], x[1]), Z2, lambda x: anp.hypot(x[0], x[1]) ** 2,
              lambda x: x[0] ** 2 + x[1] ** 2),
    "hypot(x, 0)": (lambda x: anp.sum(anp.hypot(x, 0.0)), Z3, lambda x: anp.sum(anp.hypot(x, 0.0) ** 2), sumsq),
    "std": (anp.std, CONST, lambda x: anp.std(x) ** 2, anp.var),
    "std(ddof=1)": (lambda x: anp.std(x, ddof=1), CONST, lambda x: anp.std(x, ddof=1) ** 2,
                    lambda x: anp.var(x, ddof=1)),
    "std(axis=1)": (lambda x: anp.sum(anp.std(x, axis=1)), CONST23, lambda x: anp.sum(anp.std(x, axis=1) ** 2),
                    lambda x: anp.sum(anp.var(x, axis=1))),
    "std(axis=-1, keepdims)": (lambda x: anp.sum(anp.std(x, axis=-1, keepdims=True)), CONST23,
                               lambda x: anp.sum(anp.std(x, axis=-1, keepdims=True) ** 2),
                               lambda x: anp.sum(anp.var(x, axis=-1, keepdims=True))),
    "abs of a complex": (_modulus(lambda z: anp.sum(anp.abs(z))), Z2,
                         _modulus(lambda z: anp.sum(anp.abs(z)) ** 2), lambda x: x[0] ** 2 + x[1] ** 2),
    "abssum of a complex": (_modulus(abssum), Z2, _modulus(lambda z: abssum(z) ** 2), lambda x: x[0] ** 2 + x[1] ** 2),
    "maxabs of a complex": (_modulus(maxabs), Z2, _modulus(lambda z: maxabs(z) ** 2), lambda x: x[0] ** 2 + x[1] ** 2),
    "norm of a complex": (_modulus(anp.linalg.norm), Z2, _modulus(lambda z: anp.linalg.norm(z) ** 2),
                          lambda x: x[0] ** 2 + x[1] ** 2),
    "total(norm, model)": (_total_norm, Z23, lambda x: _total_norm(x) ** 2, sumsq),
    "total(scaled(2, norm), model)": (_total_scaled_norm, Z3, lambda x: _total_scaled_norm(x) ** 2,
                                      lambda x: 4.0 * sumsq(x)),
}

# Piecewise linear: subgradient 0 at first order, and 0 at second (the Hessian's value on every side of the kink)
PIECEWISE_LINEAR = {
    "norm(x, 1)": (lambda x: anp.linalg.norm(x, 1), Z3),
    "norm(x, inf)": (lambda x: anp.linalg.norm(x, np.inf), Z3),
    "norm(x, -inf)": (lambda x: anp.linalg.norm(x, -np.inf), Z3),
    "abssum": (abssum, Z23),
    "maxabs": (maxabs, Z23),
    "sum(abs(x))": (lambda x: anp.sum(anp.abs(x)), Z3),
    "total(abssum, model)": (lambda x: total(abssum, [x, 2.0 * x]), Z3),
}

FIRST = {"reverse": grad, "forward": jacfwd}
SECOND = {"reverse over reverse": lambda f: jacrev(grad(f)), "forward over reverse": hessian,
          "forward over forward": lambda f: jacfwd(jacfwd(f)), "reverse over forward": lambda f: jacrev(jacfwd(f))}


def _hessian_shape(x):
    return np.shape(x) + np.shape(x)


def _truth_or_all_nan(got, truth):
    got = np.asarray(got)
    assert got.shape == np.shape(truth)
    if not np.isnan(got).all():
        np.testing.assert_allclose(got, truth, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", FIRST)
@pytest.mark.parametrize("name", sorted(EUCLIDEAN) + sorted(PIECEWISE_LINEAR))
def test_first_order_at_the_kink_is_the_subgradient_zero(name, mode):
    f, x = (EUCLIDEAN[name][:2] if name in EUCLIDEAN else PIECEWISE_LINEAR[name])
    np.testing.assert_array_equal(FIRST[mode](f)(x), np.zeros_like(x))


@pytest.mark.parametrize("mode", SECOND)
@pytest.mark.parametrize("name", sorted(EUCLIDEAN))
def test_second_order_of_a_euclidean_norm_at_its_kink_is_nan(name, mode):
    f, x = EUCLIDEAN[name][:2]
    h = SECOND[mode](f)(x)
    assert np.shape(h) == _hessian_shape(x) and np.isnan(h).all()


@pytest.mark.parametrize("mode", SECOND)
@pytest.mark.parametrize("name", sorted(n for n in EUCLIDEAN if EUCLIDEAN[n][2] is not None))
def test_a_smooth_composite_through_the_kink_gets_its_true_hessian_or_nan(name, mode):
    """``norm(x) ** 2`` is ``sum(x * x)``: the chain rule through the kink must not give a finite wrong Hessian
    (it gave 0 for every spelling but one, where the truth is 2 I)."""
    _, x, square, smooth = EUCLIDEAN[name]
    _truth_or_all_nan(SECOND[mode](square)(x), hessian(smooth)(x))


@pytest.mark.parametrize("mode", SECOND)
@pytest.mark.parametrize("name", sorted(PIECEWISE_LINEAR))
def test_second_order_of_a_piecewise_linear_norm_at_its_kink_is_zero(name, mode):
    f, x = PIECEWISE_LINEAR[name]
    np.testing.assert_array_equal(SECOND[mode](f)(x), np.zeros(_hessian_shape(x)))


def _first_and_second(f, x):
    """Every way to take f' and f'' at a scalar ``x``: (reverse, forward) and the four nestings."""
    pushed = lambda x: jvp(f, x, 1.0)[1]  # noqa: E731
    first = [grad(f)(x), pushed(x)]
    second = [grad(grad(f))(x), jvp(grad(f), x, 1.0)[1], grad(pushed)(x), jvp(pushed, x, 1.0)[1]]
    return np.array(first, float), np.array(second, float)


@pytest.mark.filterwarnings("ignore:divide by zero", "ignore:invalid value")
def test_sqrt_and_cbrt_at_zero_have_the_one_sided_derivative_inf():
    """``cbrt'(0)`` was NaN (``sign(x) |x|**(1/3)``: ``sign``'s 0 times ``inf``); now ``+inf``, as ``sqrt``'s.  The
    second derivative: ``sqrt``'s one-sided ``-inf``; ``cbrt``'s one-sided limits are ``-inf`` and ``+inf``: NaN."""
    for f in (anp.sqrt, anp.cbrt):
        first, _ = _first_and_second(f, 0.0)
        np.testing.assert_array_equal(first, [np.inf, np.inf])
    np.testing.assert_array_equal(_first_and_second(anp.sqrt, 0.0)[1], [-np.inf] * 4)
    assert np.isnan(_first_and_second(anp.cbrt, 0.0)[1]).all()
    assert grad(anp.cbrt)(-0.0) == np.inf


@pytest.mark.parametrize("x", [-8.0, -0.3, 0.7, 27.0])
def test_cbrt_away_from_zero_is_the_derivative_of_numpys_cbrt(x):
    first, second = _first_and_second(anp.cbrt, x)
    np.testing.assert_allclose(first, 1.0 / (3.0 * np.cbrt(x) ** 2), rtol=1e-14)  # numpy's cbrt, differentiated
    np.testing.assert_allclose(second, -2.0 / (9.0 * np.cbrt(x) ** 5), rtol=1e-13)
    assert anp.cbrt(x) == np.cbrt(x)


# Away from the kink every spelling is an ordinary smooth function: gradcheck at orders 1 and 2, and the JVP's
# derivative too.
def _away(x):
    """A point near the kink but off it (every entry moved; a constant vector made varied)."""
    return x + np.random.default_rng(36).standard_normal(np.shape(x))


@pytest.mark.parametrize("name", sorted(EUCLIDEAN) + sorted(PIECEWISE_LINEAR))
def test_every_spelling_away_from_the_kink_passes_gradcheck_to_second_order(name):
    f, x = (EUCLIDEAN[name][:2] if name in EUCLIDEAN else PIECEWISE_LINEAR[name])
    x = _away(x)
    assert gradcheck(f, x, order=2)
    v = np.random.default_rng(1).standard_normal(np.shape(x))
    assert gradcheck(lambda x: jvp(f, x, v)[1], x, order=1)
    np.testing.assert_allclose(jvp(f, x, v)[1], np.sum(grad(f)(x) * v), rtol=1e-12)
    if name in EUCLIDEAN and EUCLIDEAN[name][2] is not None:
        _, _, square, smooth = EUCLIDEAN[name]
        np.testing.assert_allclose(hessian(square)(x), hessian(smooth)(x), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("x", [np.array([0.0, 2.0]), np.array([3.0, -4.0]), np.array([0.5, 0.0])])
def test_hypot_away_from_the_origin_passes_gradcheck_to_second_order(x):
    f = lambda x: anp.hypot(x[0], x[1])  # noqa: E731
    assert gradcheck(f, x, order=2)
    np.testing.assert_allclose(hessian(f)(x), hessian(lambda x: anp.linalg.norm(x))(x), rtol=1e-12)


# Per example: under vmap, and along an axis, the NaN lands on the example (the row) at the kink alone.
def test_under_vmap_only_the_example_at_the_kink_gets_nan():
    batch = np.stack([np.zeros(2), np.array([1.0, -2.0])])
    for f, smooth in [(lambda x: anp.linalg.norm(x) ** 2, sumsq), (lambda x: anp.std(x) ** 2, anp.var),
                      (lambda x: anp.hypot(x[0], x[1]) ** 2, lambda x: x[0] ** 2 + x[1] ** 2)]:
        for second in (hessian, lambda f: jacrev(grad(f))):
            h = vmap(second(f))(batch)
            assert np.isnan(h[0]).all()
            np.testing.assert_allclose(h[1], hessian(smooth)(batch[1]), rtol=1e-12)
        np.testing.assert_array_equal(vmap(grad(f))(batch)[0], np.zeros(2))


def test_a_constant_row_beside_an_ordinary_one():
    x = np.array([[2.0, 2.0, 2.0], [1.0, -2.0, 0.5]])
    h = hessian(lambda x: anp.sum(anp.std(x, axis=1) ** 2))(x)
    assert np.isnan(h[0, :, 0]).all()
    np.testing.assert_allclose(h[1, :, 1], hessian(anp.var)(x[1]), rtol=1e-12)


def test_std_of_one_value_is_constant_at_every_order():
    """No kink to pass: the variance of one value is identically 0, so ``std`` and its derivatives are 0."""
    for f, x in [(anp.std, 3.5), (lambda x: anp.sum(anp.std(x, axis=1)), np.array([[1.0], [0.0]]))]:
        np.testing.assert_array_equal(grad(f)(x), np.zeros_like(x))
        assert np.all(grad(lambda x, f=f: anp.sum(grad(f)(x)))(x) == 0)


def test_float32_keeps_its_dtype_at_the_kink():
    x = np.zeros(3, np.float32)
    for f in (anp.linalg.norm, lambda x: anp.linalg.norm(x, axis=0), anp.std):
        g = grad(f)(x)
        assert g.dtype == np.float32 and np.all(g == 0)
        h = hessian(f)(x)
        assert h.dtype == np.float32 and np.isnan(h).all()


# PyTorch on the same inputs, where its answer depends on no LAPACK path.
torch_cases = {
    "norm": (lambda t: t.linalg.vector_norm, Z3),
    "norm(X, axis=0)": (lambda t: lambda x: t.linalg.vector_norm(x, dim=0).sum(), Z23),
    "norm(X, 'fro')": (lambda t: lambda x: t.linalg.matrix_norm(x), Z23),
    "norm(x, 1)": (lambda t: lambda x: t.linalg.vector_norm(x, 1), Z3),
    "norm(x, inf)": (lambda t: lambda x: t.linalg.vector_norm(x, float("inf")), Z3),
    "std": (lambda t: lambda x: t.std(x, correction=0), CONST),
}
OURS = {name: (EUCLIDEAN[name] if name in EUCLIDEAN else PIECEWISE_LINEAR[name])[0] for name in torch_cases}


@pytest.mark.parametrize("name", sorted(torch_cases))
def test_first_order_at_the_kink_equals_torch(name):
    torch = pytest.importorskip("torch", reason="torch is this test's oracle")
    make, x = torch_cases[name]
    t = torch.tensor(x, requires_grad=True)
    (g,) = torch.autograd.grad(make(torch)(t), t)
    np.testing.assert_array_equal(grad(OURS[name])(x), g.numpy())


@pytest.mark.parametrize("name", ["norm", "norm(X, axis=0)", "norm(X, 'fro')"])
def test_second_order_of_a_norm_squared_at_zero_is_nan_as_in_torch(name):
    """torch gives NaN here too; where it gives 0 (``std(x)**2`` at a constant vector, ``|z|**2`` at 0) it is
    the wrong finite number §11 rules out (docs/semantics.md lists both)."""
    torch = pytest.importorskip("torch", reason="torch is this test's oracle")
    make, x = torch_cases[name]
    h = torch.autograd.functional.hessian(lambda t: make(torch)(t) ** 2, torch.tensor(x))
    assert np.isnan(h.numpy()).all()
    assert np.isnan(hessian(lambda x: OURS[name](x) ** 2)(x)).all()


# A choice whose derivative is exactly 0 (a unit that is off, a bound that holds, an element below the maximum)
# keeps the NaN of a kink further on off its input: the composite is locally constant there, its true Hessian 0.
OFF = -np.ones(3)
CHOSEN_AWAY = {
    "relu": lambda x: F.relu(x),
    "maximum(x, 0)": lambda x: anp.maximum(x, 0.0),
    "minimum(0, -x)": lambda x: anp.minimum(np.zeros(3), -x),
    "fmax(x, 0)": lambda x: anp.fmax(x, 0.0),
    "clip(x, 0, 1)": lambda x: anp.clip(x, 0.0, 1.0),
    "max beside a zero column": lambda x: anp.max(anp.stack([x, np.zeros(3)], axis=1), axis=1),
}


@pytest.mark.parametrize("mode", SECOND)
@pytest.mark.parametrize("name", sorted(CHOSEN_AWAY))
def test_a_kinks_nan_stays_off_an_input_the_choice_did_not_take(name, mode):
    """Wherever a reverse pass runs, the choice's ``where`` stops the NaN.  Forward over forward meets the kink
    last, with a zero tangent times its NaN and no choice after it: NaN there, which section 11 allows."""
    f = lambda x: anp.linalg.norm(CHOSEN_AWAY[name](x))  # noqa: E731  (the norm of zeros, constant near OFF)
    if mode == "forward over forward":
        _truth_or_all_nan(SECOND[mode](f)(OFF), np.zeros((3, 3)))
    else:
        np.testing.assert_array_equal(SECOND[mode](f)(OFF), np.zeros((3, 3)))
    np.testing.assert_array_equal(grad(f)(OFF), np.zeros(3))


def test_a_kinks_nan_stays_off_a_unit_that_is_off_as_in_torch():
    torch = pytest.importorskip("torch", reason="torch is this test's oracle")
    want = torch.autograd.functional.hessian(lambda t: torch.linalg.vector_norm(torch.relu(t)), torch.tensor(OFF))
    np.testing.assert_array_equal(hessian(lambda x: anp.linalg.norm(F.relu(x)))(OFF), want.numpy())


def test_abs_squared_at_zero_is_the_documented_exception_and_torchs_value():
    """docs/semantics.md: piecewise-linear kinks keep second derivative 0, so ``abs(x) ** 2`` at 0 gets torch's 0,
    not the smooth ``x ** 2``'s 2 (NaN would poison every L1 penalty's Hessian at a zero bias)."""
    torch = pytest.importorskip("torch", reason="torch is this test's oracle")
    x = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((x.abs() ** 2).sum(), x, create_graph=True)
    (hv,) = torch.autograd.grad(g.sum(), x)
    for mode in SECOND.values():
        ours = mode(lambda x: anp.sum(anp.abs(x) ** 2))(Z3)
        np.testing.assert_array_equal(ours @ np.ones(3), hv.numpy())


@pytest.mark.parametrize("n", [np.float64(2.5), np.float32(0.5), np.array(4.0), 3.0, np.float64(0.0), np.array(-0.0),
                               np.float64(np.inf), np.float64(np.nan), np.array([0.0, 2.0, np.inf], np.float32)],
                         ids=repr)
def test_inverse_norm_is_the_reciprocal_and_zero_at_zero_for_one_norm_and_many(n):
    expected = np.divide(1.0, n, out=np.zeros(np.shape(n), np.result_type(n)), where=np.asarray(n) != 0)
    got = inverse_norm.fun(n)
    assert np.result_type(got) == np.result_type(n) and np.shape(got) == np.shape(n)
    np.testing.assert_array_equal(got, expected)
