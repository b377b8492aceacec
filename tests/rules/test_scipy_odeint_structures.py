"""``odeint`` with a structure of arrays in ``args`` (issue 37): autograd's neural-ODE example passes a
network's parameters, a list of ``(W, b)`` tuples, as ``args=(params,)``.  Each leaf is differentiated, and the
gradient mirrors the structure (design.md 2).

Oracles: finite differences through ``gradcheck`` (orders 1 and 2); the same network with its parameters
passed flat (the structure only regroups them); and PyTorch, which has no odeint, on a fixed-step RK4 of 4000
steps written in torch: its discretisation error (about h^4) is far below the tolerances, so both solvers
approximate the same exact solution and its exact gradient.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import gradcheck
from autodiff.scipy.integrate import odeint

TIGHT = {"rtol": 1e-12, "atol": 1e-12}
rng = np.random.default_rng(3)
PARAMS = [(0.5 * rng.standard_normal((4, 2)), 0.1 * rng.standard_normal(4)),
          (0.5 * rng.standard_normal((2, 4)), 0.1 * rng.standard_normal(2))]
Y0 = np.array([1.0, -0.5])
TIMES = np.array([0.0, 0.5, 1.0])


def net(y, t, params):
    """autograd's ode_net: a tanh MLP as the vector field."""
    h = y
    for i, (w, b) in enumerate(params):
        h = w @ h + b
        if i < len(params) - 1:
            h = anp.tanh(h)
    return h


def loss(params, y0):
    return anp.sum(odeint(net, y0, TIMES, (params,), **TIGHT) ** 2)


def test_the_gradient_mirrors_the_structure_and_equals_the_flat_spelling():
    g = autodiff.grad(loss)(PARAMS, Y0)
    assert type(g) is list and all(type(p) is tuple and len(p) == 2 for p in g)
    assert [tuple(a.shape for a in p) for p in g] == [tuple(a.shape for a in p) for p in PARAMS]

    def flat(w1, b1, w2, b2, y0):
        return anp.sum(odeint(lambda y, t, *p: net(y, t, [p[:2], p[2:]]), y0, TIMES, (w1, b1, w2, b2), **TIGHT) ** 2)

    flat_g = autodiff.grad(flat, argnums=(0, 1, 2, 3))(*PARAMS[0], *PARAMS[1], Y0)
    for ours, theirs in zip([a for p in g for a in p], flat_g):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_gradients_match_finite_differences_orders_1_and_2():
    assert gradcheck(loss, PARAMS, Y0)
    small = [(0.5 * rng.standard_normal((2, 2)), 0.1 * rng.standard_normal(2))]
    assert gradcheck(lambda p: odeint(net, Y0, np.array([0.0, 0.4]), (p,), **TIGHT), small, order=2)


def _torch_rk4(torch, params, y0, times, steps):
    def field(y):
        h = y
        for i, (w, b) in enumerate(params):
            h = w @ h + b
            if i < len(params) - 1:
                h = torch.tanh(h)
        return h

    out, y = [y0], y0
    for t0, t1 in zip(times[:-1], times[1:]):
        h = (t1 - t0) / steps
        for _ in range(steps):
            k1 = field(y)
            k2 = field(y + 0.5 * h * k1)
            k3 = field(y + 0.5 * h * k2)
            k4 = field(y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(y)
    return torch.stack(out)


def test_gradients_match_torch_on_a_fine_rk4():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    tparams = [tuple(torch.tensor(a, requires_grad=True) for a in p) for p in PARAMS]
    ty0 = torch.tensor(Y0, requires_grad=True)
    tloss = (_torch_rk4(torch, tparams, ty0, TIMES, 2000) ** 2).sum()
    tloss.backward()
    value, (g, gy0) = autodiff.value_and_grad(loss, argnums=(0, 1))(PARAMS, Y0)
    np.testing.assert_allclose(value, tloss.item(), rtol=1e-10)
    np.testing.assert_allclose(gy0, ty0.grad.numpy(), rtol=1e-8, atol=1e-10)
    for ours, theirs in zip(g, tparams):
        for a, ta in zip(ours, theirs):
            np.testing.assert_allclose(a, ta.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_a_dict_with_non_array_leaves_passes_them_through():
    """A string and an int in the structure are constants: func sees them as given, their gradient is None."""

    def field(y, t, p):
        assert p["activation"] == "tanh" and p["repeat"] == 2
        return p["repeat"] * anp.tanh(p["w"] @ y)

    params = {"w": PARAMS[1][0][:, :2], "activation": "tanh", "repeat": 2}
    g = autodiff.grad(lambda p: anp.sum(odeint(field, Y0, TIMES, (p,), **TIGHT)))(params)
    assert set(g) == {"w", "activation", "repeat"} and g["activation"] is None and g["repeat"] is None
    assert gradcheck(lambda w: odeint(field, Y0, TIMES, (dict(params, w=w),), **TIGHT), params["w"])


def test_a_structured_tangent_in_forward_mode():
    direction = [tuple(rng.standard_normal(a.shape) for a in p) for p in PARAMS]
    _, tangent = autodiff.jvp(lambda p: loss(p, Y0), (PARAMS,), (direction,))
    g = autodiff.grad(loss)(PARAMS, Y0)
    expected = sum(np.sum(a * d) for p, dp in zip(g, direction) for a, d in zip(p, dp))
    np.testing.assert_allclose(tangent, expected, rtol=1e-8)


def test_under_vmap_over_the_initial_states():
    y0s = rng.standard_normal((3, 2))
    batched = autodiff.vmap(lambda y0: autodiff.grad(loss)(PARAMS, y0))(y0s)
    for i, y0 in enumerate(y0s):
        one = autodiff.grad(loss)(PARAMS, y0)
        for a, b in zip([a for p in batched for a in p], [a for p in one for a in p]):
            np.testing.assert_allclose(a[i], b, rtol=1e-7, atol=1e-9)
