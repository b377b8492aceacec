"""linearize protects what its record reads (issue 36 item 3, design.md section 10).

Rules such as exp, tanh, sqrt, sigmoid and softmax read their own output (``ans``) when a tangent is pushed
along the record or a cotangent pulled back over it, so ``out -= target`` after ``linearize`` used to change
every later ``f_jvp(v)`` and ``f_jvp.transpose(u)`` silently.  Now the output (and aux, and the primals) stay
read-only while ``f_jvp`` lives, as for a ``vjp`` pullback, and writable again once it is collected.  The
oracles are a fresh ``jvp``/``vjp`` at the same point (nothing to mutate there).
"""

import gc

import numpy as np
import pytest

import autodiff
import autodiff.nn.functional as F
import autodiff.numpy as anp
from autodiff import ggnvp, hvp_operator, jvp, linearize, vjp

X = np.array([0.3, 0.9, 1.7])
V = np.array([1.0, -0.5, 2.0])
U = np.array([0.25, 1.5, -1.0])

READS_ITS_OUTPUT = {
    "exp": anp.exp,
    "tanh": anp.tanh,
    "sqrt": anp.sqrt,
    "sigmoid": F.sigmoid,
    "softmax": F.softmax,
}


def _subtract_in_place(a):
    a -= 1.0


def _assign(a):
    a[0] = 5.0


@pytest.mark.parametrize("write", [_subtract_in_place, _assign])
@pytest.mark.parametrize("name", list(READS_ITS_OUTPUT))
def test_the_output_is_read_only_while_f_jvp_lives_and_its_products_stay_right(name, write):
    f = READS_ITS_OUTPUT[name]
    x = X.copy()
    out, f_jvp = linearize(f, x)
    want_out, want_tangent = jvp(f, (X.copy(),), (V,))
    _, pullback = vjp(f, X.copy())
    (want_ct,) = pullback(U)
    with pytest.raises(ValueError, match="read-only"):
        write(out)
    with pytest.raises(ValueError, match="read-only"):
        write(x)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(x, X)
    np.testing.assert_allclose(f_jvp(V), want_tangent, rtol=1e-15)
    np.testing.assert_allclose(f_jvp.transpose(U)[0], want_ct, rtol=1e-15)


@pytest.mark.parametrize("name", list(READS_ITS_OUTPUT))
def test_everything_is_writable_again_once_f_jvp_is_collected(name):
    x = X.copy()
    out, f_jvp = linearize(READS_ITS_OUTPUT[name], x)
    assert not out.flags.writeable and not x.flags.writeable
    del f_jvp
    gc.collect()
    assert out.flags.writeable and x.flags.writeable
    out -= 1.0  # the caller's arrays again
    x[0] = 5.0


def test_outputs_inside_a_structure_and_the_parts_of_a_tuple_output_are_protected():
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    out, f_jvp = linearize(lambda x: {"e": anp.exp(x), "eig": anp.linalg.eigh(x)}, a)
    for leaf in (out["e"], *out["eig"]):
        with pytest.raises(ValueError, match="read-only"):
            leaf[0] = 0.0
    del f_jvp
    gc.collect()
    assert out["e"].flags.writeable and all(part.flags.writeable for part in out["eig"])


def test_aux_that_the_record_reads_is_protected_too():
    x = X.copy()
    out, f_jvp, aux = linearize(lambda x: (anp.sum(anp.tanh(x)), {"t": anp.tanh(x)}), x, has_aux=True)
    want = jvp(lambda x: anp.sum(anp.tanh(x)), (X,), (V,))[1]
    assert not aux["t"].flags.writeable
    np.testing.assert_allclose(f_jvp(V), want, rtol=1e-15)
    del f_jvp
    gc.collect()
    assert aux["t"].flags.writeable


def test_a_constant_the_function_closes_over_is_protected_while_f_jvp_lives():
    c = np.array([1.0, 2.0, 3.0])
    out, f_jvp = linearize(lambda x: anp.sum(anp.sin(x * c)), X)
    with pytest.raises(ValueError, match="read-only"):
        c[0] = 0.0
    del f_jvp
    gc.collect()
    c[0] = 0.0


def test_hvp_operator_keeps_its_gradient_read_only_until_collected():
    """The other transform that keeps a record past its call (checked for the same hole: it was protected)."""
    x = X.copy()
    op = hvp_operator(lambda x: anp.sum(anp.exp(x)), x)
    for a in (op.gradient, x):  # (the value, a numpy scalar, cannot be written to)
        with pytest.raises(ValueError, match="read-only"):
            a[...] = 0.0
    np.testing.assert_allclose(op(V), np.exp(X) * V, rtol=1e-15)
    gradient = op.gradient
    del op
    gc.collect()
    assert gradient.flags.writeable and x.flags.writeable


def test_ggnvp_leaves_nothing_read_only_after_it_returns():
    """ggnvp's linearize lives only for the call: the arrays are the caller's again when it returns."""
    x = X.copy()
    result = ggnvp(anp.exp, lambda y: anp.sum(y ** 2), x, V)
    np.testing.assert_allclose(result, 2 * np.exp(2 * X) * V, rtol=1e-14)
    assert x.flags.writeable


def test_nested_linearize_inside_grad_still_differentiates():
    """Protection must not get in the way of an outer derivative: d/dx <u, J_f(x) v> against finite differences."""

    def inner(x):
        out, f_jvp = linearize(anp.tanh, x)
        return anp.sum(U * f_jvp(V))

    autodiff.gradcheck(inner, X, order=1)
    autodiff.gradcheck(inner, X, order=2)
