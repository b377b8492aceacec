"""Audit 2: gradcheck never passes having checked nothing, show refuses cycles, norm's default ord with keepdims."""

import signal
from contextlib import contextmanager

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import GradcheckError, gradcheck, show
from autodiff.extend import defvjp, primitive

wrong_sin = primitive(np.sin, "audit2_wrong_sin")
defvjp(wrong_sin, lambda g, ans, x: g * anp.sin(x))  # deliberately wrong: should be cos


# gradcheck


@pytest.mark.parametrize("point", [3, np.int64(3), True], ids=["int", "np.int64", "bool"])
def test_gradcheck_at_an_int_point_refuses_instead_of_passing(point):
    message = r"gradcheck: nothing to check: arg 0 has dtype (int|bool).*np\.asarray\(x, float\)"
    with pytest.raises(ValueError, match=message):
        gradcheck(wrong_sin, point)


@pytest.mark.parametrize("order", [1, 2])
def test_gradcheck_at_an_int_array_refuses_at_both_orders(order):
    with pytest.raises(ValueError, match=r"arg 0 has dtype int64"):
        gradcheck(lambda x: anp.sum(wrong_sin(x)), np.array([1, 2, 3]), order=order)


def test_gradcheck_names_the_int_leaf_inside_a_structure():
    with pytest.raises(ValueError, match=r"arg 0: \['w'\] has dtype int"):
        gradcheck(lambda m: anp.sum(wrong_sin(m["w"])), {"w": np.array([1, 2])})


def test_gradcheck_at_the_float_point_still_catches_the_wrong_rule():
    with pytest.raises(GradcheckError):
        gradcheck(wrong_sin, 3.0)
    assert gradcheck(anp.sin, 3.0)


def test_int_arguments_beside_a_float_are_still_constants():
    assert gradcheck(lambda x, k: anp.sum(x ** k), np.array([0.5, 2.0]), 3)
    with pytest.raises(GradcheckError):
        gradcheck(lambda x, k: anp.sum(wrong_sin(x) * k), np.array([0.5, 2.0]), 3)


def test_gradcheck_with_no_numeric_argument_refuses():
    with pytest.raises(ValueError, match="no float or complex argument"):
        gradcheck(lambda s: 1.0, "text")


@pytest.mark.parametrize("eps", [0, 0.0, -1e-6, float("nan"), float("inf")])
def test_gradcheck_refuses_a_step_that_is_not_positive_and_finite(eps):
    with pytest.raises(ValueError, match=r"gradcheck: eps must be a positive finite step"):
        gradcheck(anp.sin, 0.5, eps=eps)


# show


@contextmanager
def _deadline(seconds):
    """Raise TimeoutError in the main thread if the block runs longer than ``seconds``."""
    if not hasattr(signal, "setitimer"):
        pytest.skip("signal.setitimer (POSIX) bounds the would-be hang; this platform has none")

    def on_alarm(signum, frame):
        raise TimeoutError(f"still running after {seconds}s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _cyclic_list():
    x = [np.ones(2)]
    x.append(x)
    return x, r"arg grad: \[1\]"


def _cyclic_dict():
    d = {"w": np.ones(2), "inner": {"b": 1.0}}
    d["inner"]["loop"] = d
    return d, r"arg grad: \['inner'\]\['loop'\]"


@pytest.mark.parametrize("make", [_cyclic_list, _cyclic_dict], ids=["list", "dict"])
def test_show_refuses_a_cycle_naming_its_path_within_a_second(make):
    tree, path = make()
    with _deadline(1.0), pytest.raises(ValueError, match=rf"cycle: the object at {path} contains itself"):
        show(tree)


def test_show_keeps_ties_and_repeated_containers():
    w, inner = np.ones(2), [np.zeros(1)]
    text = show({"a": w, "b": w, "c": inner, "d": inner})
    assert text.count("float64[2]") == 2 and text.count("grad.c[0]") == 1 and text.count("grad.d[0]") == 1


def test_show_a_structure_nested_10000_deep():
    x = np.array([3.0, 4.0])
    for _ in range(10_000):
        x = [x]
    lines = show(x).splitlines()
    assert len(lines) == 10_001 and lines[-1].endswith("float64[2]  norm 5")


# norm with the default ord, a 2-tuple axis and keepdims


NORM_CASES = [((2, 3), (0, 1)), ((2, 3), (-2, -1)), ((4, 2, 3), (1, 2)), ((2, 3, 4), (0, 2))]


@pytest.mark.parametrize("shape, axis", NORM_CASES)
@pytest.mark.parametrize("keepdims", [True, False])
def test_norm_default_ord_tuple_axis_matches_numpy(shape, axis, keepdims):
    x = np.random.default_rng(0).standard_normal(shape)
    got = anp.linalg.norm(x, axis=axis, keepdims=keepdims)
    want = np.linalg.norm(x, axis=axis, keepdims=keepdims)
    assert np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("shape, axis", NORM_CASES)
@pytest.mark.parametrize("order", [1, 2])
def test_norm_default_ord_tuple_axis_keepdims_passes_gradcheck(shape, axis, order):
    x = np.random.default_rng(1).standard_normal(shape)
    assert gradcheck(lambda m: anp.linalg.norm(m, axis=axis, keepdims=True), x, order=order)


@pytest.mark.parametrize("shape, axis", NORM_CASES)
def test_norm_default_ord_tuple_axis_keepdims_gradient_matches_torch(shape, axis):
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    x = np.random.default_rng(2).standard_normal(shape)
    weights = np.random.default_rng(3).standard_normal(np.linalg.norm(x, axis=axis, keepdims=True).shape)
    ours = autodiff.grad(lambda m: anp.sum(anp.linalg.norm(m, axis=axis, keepdims=True) * weights))(x)
    t = torch.tensor(x, requires_grad=True)
    (torch.linalg.norm(t, dim=axis, keepdim=True) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-10, atol=1e-12)
