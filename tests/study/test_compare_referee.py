"""compare's referee (issue 41): relative steps, relative verdicts, one-sided derivatives at kinks, and the
second derivative of a kink, which used to crash torch's column."""

import numpy as np
import pytest

import autodiff
from autodiff import compare

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")

from tests.study.test_compare import one_sided  # noqa: E402  numpy's one-sided quotients, the referee's oracle


def torch_grad_and_hvp(f, x):
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(f(t), t, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), t)
    return g.detach().numpy(), h.numpy(force=True)  # force: abs's second derivative is a ZeroTensor


def test_abs_at_its_kink_with_hvp_runs_in_torch_and_reports_the_sides():
    """Was: RuntimeError "Cannot convert a ZeroTensor to numpy" from torch's second derivative of abs."""
    c = compare(lambda xp, x: xp.abs(x), 0.0, hvp=True, against=("torch",))
    g, h = torch_grad_and_hvp(torch.abs, 0.0)
    assert np.allclose(c.results["torch"].grad[0], g) and np.allclose(c.results["torch"].hvp[0], h)
    left, right = one_sided(np.abs, 0.0)
    fd = c.results["finite differences"]
    assert np.isnan(fd.grad[0]) and np.allclose([fd.left[0], fd.right[0]], [left, right])
    text = str(c)
    assert f"no derivative here: left {float(left):.1f}, right {float(right):.1f}" in text
    assert c.verdict("torch") == "a convention (no derivative here)"


def test_relu_at_zero_reports_its_one_sided_derivatives_not_a_half():
    x0 = np.array([0.0, 1.0])
    c = compare(lambda xp, x: xp.sum(xp.nn.relu(x)), x0, against=("torch",))
    left, right = one_sided(lambda x: np.sum(np.maximum(x, 0.0)), x0)
    assert np.allclose(c.results["finite differences"].left[0], left)
    assert np.allclose(c.results["finite differences"].right[0], right)
    assert f"x0[0] = 0.0: no derivative here: left {left[0]:.1f}, right {right[0]:.1f}" in str(c)
    assert "0.5" not in str(c).splitlines()[-2]  # the referee's row: no symmetric difference posing as a value


def test_a_smooth_cube_at_1e3_agrees_in_every_system_with_relative_steps():
    """Was: "differs: Hv" for every system (absolute steps of 1e-4 at 1e3)."""
    c = compare(lambda xp, x: x ** 3, 1e3, hvp=True)
    g, h = torch_grad_and_hvp(lambda t: t ** 3, 1e3)
    fd = c.results["finite differences"]
    assert np.isclose(fd.grad[0], g, rtol=1e-6) and np.isclose(fd.hvp[0], h, rtol=1e-4)
    assert all(c.verdict(name) == "=" for name in c.results if name != "finite differences")


def test_a_coordinate_swamped_by_a_large_value_still_settles():
    x0 = np.array([1e3, 2.0])
    c = compare(lambda xp, x: xp.sum(x ** 3), x0, against=("torch",))
    g, _ = torch_grad_and_hvp(lambda t: (t ** 3).sum(), x0)
    assert np.allclose(c.results["finite differences"].grad[0], g, rtol=1e-3)
    assert c.verdict("autodiff") == "=" == c.verdict("torch")


def test_verdicts_are_relative_a_tiny_wrong_gradient_differs():
    """Was "=" under atol=1e-6: any two gradients below 1e-6 counted as equal."""
    fs = {"autodiff": lambda x: 1e-9 * x ** 2, "numpy": lambda x: 1e-9 * x ** 3}
    assert compare(fs, 1.0, against=()).verdict("autodiff") == "differs: gradient"
    same = {"autodiff": lambda x: 1e-9 * x ** 3, "numpy": lambda x: 1e-9 * x ** 3}
    assert compare(same, 1.0, against=()).verdict("autodiff") == "="


def test_sqrt_at_zero_has_no_left_side_and_an_infinite_right_one():
    c = compare(lambda xp, x: xp.sqrt(x), 0.0, against=("torch",))
    fd = c.results["finite differences"]
    g, _ = torch_grad_and_hvp(torch.sqrt, 0.0)
    assert np.isnan(fd.left[0]) and fd.right[0] == g == np.inf  # torch's one-sided derivative is the same inf
    assert "no derivative here: left nan, right inf" in str(c)


def test_cbrt_at_zero_is_infinite_from_both_sides():
    c = compare({"autodiff": autodiff.numpy.cbrt, "numpy": np.cbrt}, 0.0, against=())
    fd = c.results["finite differences"]
    assert fd.grad[0] == fd.left[0] == fd.right[0] == np.inf == c.results["autodiff"].grad[0]
    assert c.verdict("autodiff") == "="


def test_a_smooth_function_has_equal_sides_and_the_central_value():
    x0 = np.array([0.3, -1.2])
    c = compare(lambda xp, x: xp.sum(xp.sin(x) * x), x0, against=("torch",))
    fd = c.results["finite differences"]
    g, _ = torch_grad_and_hvp(lambda t: (torch.sin(t) * t).sum(), x0)
    for side in (fd.grad, fd.left, fd.right):
        assert np.allclose(side[0], g, rtol=1e-6)
    assert c.kinks() == [] and c.notes() == []


def test_a_flat_region_is_flat_not_an_infinite_slope_from_rounding():
    """f constant along a coordinate, but not 0: its differences are rounding noise, which grows as the step
    shrinks; the referee must read 0 there, not +-inf from 'growing' quotients."""
    w0, data = np.array([0.5, -1.0]), np.array([1.0, 2.0])
    c = compare(lambda xp, w: xp.sum(xp.nn.relu(w * xp.asarray(data) + 0.1) ** 2), w0, against=("torch",))
    g, _ = torch_grad_and_hvp(lambda t: (torch.relu(t * torch.tensor(data) + 0.1) ** 2).sum(), w0)
    fd = c.results["finite differences"]
    for side in (fd.grad, fd.left, fd.right):
        assert np.allclose(side[0], g)
    assert c.kinks() == [] and c.verdict("torch") == "="
