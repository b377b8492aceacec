"""autodiff.scipy.integrate.odeint: values against scipy, gradients through the adjoint solve against
torch's matrix exponential (a linear system's exact solution) and against finite differences, orders 1-2."""

import numpy as np
import pytest
import scipy.integrate as si

import autodiff
import autodiff.numpy as anp
from autodiff.scipy.integrate import odeint

TIGHT = {"rtol": 1e-12, "atol": 1e-12}
rng = np.random.default_rng(5)
W, B, Y0 = rng.standard_normal((2, 2)), rng.standard_normal(2), rng.standard_normal(2)
TIMES = np.array([0.0, 0.5, 1.2, 2.0])


def net(y, t, w, b):
    """autograd's ode_net-style dynamics: a one-layer tanh network with a time-dependent damping."""
    return anp.tanh(w @ y + b) - 0.1 * t * y


def test_values_equal_scipys():
    plain = si.odeint(lambda y, t: np.tanh(W @ y + B) - 0.1 * t * y, Y0, TIMES, **TIGHT)
    np.testing.assert_allclose(odeint(net, Y0, TIMES, (W, B), **TIGHT), plain, rtol=1e-12, atol=1e-14)


def test_linear_system_gradients_equal_torch_matrix_exp():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    a = 0.5 * rng.standard_normal((3, 3))
    y0, t, w = rng.standard_normal(3), np.array([0.0, 0.3, 1.0]), rng.standard_normal((3, 3))

    def ours(y0, a):
        return anp.sum(w * odeint(lambda y, s, a: a @ y, y0, t, (a,), **TIGHT))

    ty0, ta = torch.tensor(y0, requires_grad=True), torch.tensor(a, requires_grad=True)
    exact = torch.stack([torch.linalg.matrix_exp(ta * s) @ ty0 for s in t])  # y(t) = expm(a t) y0
    (exact * torch.tensor(w)).sum().backward()
    value, grads = autodiff.value_and_grad(ours, argnums=(0, 1))(y0, a)
    np.testing.assert_allclose(value, float((exact * torch.tensor(w)).sum().detach()), rtol=1e-9)
    np.testing.assert_allclose(grads[0], ty0.grad.numpy(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(grads[1], ta.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_first_order_gradients_in_y0_args_and_times_match_finite_differences(dtype):
    y0, w, b = (x.astype(dtype) for x in (Y0, W, B))
    assert autodiff.gradcheck(lambda y0, w, b: odeint(net, y0, TIMES, (w, b), **TIGHT), y0, w, b)
    out = odeint(net, y0, TIMES, (w, b), **TIGHT)
    assert out.dtype == dtype
    # the times: the adaptive solver's own noise needs a wider step than the default
    assert autodiff.gradcheck(lambda t: odeint(net, Y0, t, (W, B), **TIGHT), TIMES, eps=1e-4, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_second_order_through_the_adjoint_of_the_adjoint(dtype):
    times = np.array([0.0, 0.3, 0.6])  # two intervals: the cotangent added between them is differentiated too
    y0, b = Y0.astype(dtype), B.astype(dtype)
    assert autodiff.gradcheck(lambda y0, b: odeint(net, y0, times, (W.astype(dtype), b), **TIGHT), y0, b, order=2)
    # in the times too, jointly with y0 (the mixed derivatives); a wider step: the adaptive solver's own noise
    assert autodiff.gradcheck(lambda y0, t: odeint(net, y0, t, (W, B), **TIGHT), Y0, times, order=2, eps=1e-4,
                              rtol=1e-4, atol=1e-7)


def test_bad_arguments_are_refused_clearly():
    with pytest.raises(ValueError, match="odeint: y0 must be 1-d"):
        odeint(net, np.ones((2, 1)), TIMES, (W, B))
    with pytest.raises(TypeError, match="odeint: args must be a tuple"):
        odeint(lambda y, t, w: w @ y, Y0, TIMES, W)
