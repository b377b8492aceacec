"""trace(..., values=True) and explain(..., values=True): each row's value and the tangent or cotangent it got,
checked against our own grad/jvp and finite differences (issue 41)."""

import numpy as np

import autodiff
import autodiff.numpy as anp
from autodiff.extend import primitive
from tests.internals import value_text


def f(x):
    return anp.sum(anp.sin(x) * x)


X = np.array([0.5, 1.0, 2.0])


def _under(listing, head):
    """The values line printed under the row that starts with ``head``."""
    lines = [line.strip() for line in listing.splitlines()]
    return lines[next(k for k, line in enumerate(lines) if line.startswith(head)) + 1]


def test_reverse_listing_prints_each_value_and_the_cotangent_it_received():
    t = autodiff.trace(f, X, values=True)
    text = str(t)
    x_line = _under(text, "in  %0 x")
    assert x_line == f"value {value_text(X)}  cotangent {value_text(autodiff.grad(f)(X))}"
    fd = [(f(X + e * 1e-6) - f(X - e * 1e-6)) / 2e-6 for e in np.eye(3)]
    assert np.allclose(fd, autodiff.grad(f)(X), atol=1e-6)  # the oracle of the cotangent shown
    assert _under(text, "%1 = sin(") == f"value {value_text(np.sin(X))}  cotangent {value_text(X)}"
    assert _under(text, "%3 = sum(") == f"value {value_text(f(X))}  cotangent 1.0"
    assert f", %0 x dense float64[3] {value_text(np.sin(X))}" in t.backward()  # multiply sent x sin(x)


def test_forward_listing_prints_primal_and_tangent_values():
    v = np.array([1.0, -1.0, 0.5])
    t = autodiff.trace(f, X, tangents=(v,), values=True)
    _, tangent = autodiff.jvp(f, (X,), (v,))
    text = str(t)
    assert _under(text, "in  %0 x") == f"value {value_text(X)}  tangent {value_text(v)}"
    assert _under(text, "%3 = sum(") == f"value {value_text(f(X))}  tangent {value_text(tangent)}"


def test_a_symbolic_zero_tangent_and_a_long_array_are_abbreviated_honestly():
    flat = primitive(np.round, "flat_values")
    autodiff.extend.defjvp(flat, lambda t, ans, x: autodiff.ZeroTangent())
    t = autodiff.trace(lambda x: flat(x), np.arange(20.0), tangents=(np.ones(20),), values=True)
    line = _under(str(t), "%1 = flat_values(")
    assert line == "value [0.0, 1.0, 2.0, ..., 17.0, 18.0, 19.0]  tangent zero (symbolic)"


def test_without_values_the_listing_is_unchanged():
    assert "value " not in str(autodiff.trace(f, X))


def test_explain_values_show_the_pullbacks_numbers():
    e = autodiff.explain(anp.sin, 0.5, values=True)
    text = str(e)
    order1 = text.split("order 1")[1].split("order 2")[0]
    assert _under(order1, "%3 = sin_backward(").startswith(f"value {value_text(autodiff.grad(anp.sin)(0.5))}")
    order2 = text.split("order 2")[1]
    second = autodiff.grad(autodiff.grad(anp.sin))(0.5)  # cotangent of x at order 2 with g = h = 1
    assert _under(order2, "%7 = cos_backward(") == f"value {value_text(second)}"  # no cotangent: an extra order
