"""clip with crossed bounds or one bound (its gradient in every argument, against torch and finite differences),
and full / full_like differentiable in their fill value, under vmap too."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, jvp

X = np.array([0.5, 1.5, 3.0, -1.0])


@pytest.mark.parametrize("lo, hi", [(2.0, 1.0), (1.0, 2.0), (3.0, -2.0)])  # lo == hi is a tie: a convention
def test_clip_gradient_in_every_argument_matches_torch(lo, hi):
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    f = lambda x, a, b: anp.sum(weights * anp.clip(x, a, b))  # noqa: E731
    ours = grad(f, argnums=(0, 1, 2))(X, lo, hi)
    tx, ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (X, lo, hi))
    expected = torch.autograd.grad((torch.tensor(weights) * torch.clamp(tx, ta, tb)).sum(), (tx, ta, tb))
    for got, want in zip(ours, expected):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-14)


@pytest.mark.parametrize("lo, hi", [(2.0, 1.0), (0.0, 2.0)])
def test_clip_forward_and_reverse_agree_with_finite_differences(lo, hi):
    x = np.array([0.3, 1.2, 2.7, -0.8])
    f = lambda x, a, b: anp.sum(anp.sin(x) * anp.clip(x, a, b))  # noqa: E731
    assert gradcheck(f, x, lo, hi)
    g = grad(f, argnums=(1, 2))(x, lo, hi)
    assert jvp(f, (x, lo, hi), (np.zeros(4), 1.0, 0.0))[1] == pytest.approx(g[0], abs=1e-14)
    assert jvp(f, (x, lo, hi), (np.zeros(4), 0.0, 1.0))[1] == pytest.approx(g[1], abs=1e-14)


def test_clip_with_one_bound():
    x = np.array([0.3, 1.2, 2.7])
    assert gradcheck(lambda x, b: anp.sum(anp.clip(x, None, b) ** 2), x, 1.0)
    assert gradcheck(lambda x, a: anp.sum(anp.clip(x, a, None) ** 2), x, 1.0)


def test_full_like_and_full_are_differentiable_in_the_fill_value():
    like = np.zeros((2, 3), np.float32)
    assert grad(lambda c: anp.sum(anp.full_like(like, c) * 2.0))(1.5) == pytest.approx(12.0)
    assert gradcheck(lambda c: anp.sum(anp.sin(anp.full((2, 2), c))), 0.7, order=2)
    assert gradcheck(lambda c: anp.sum(anp.full_like(X, c, dtype=np.float64) * X), 0.3, order=2)
    assert jvp(lambda c: anp.full_like(X, c), (2.0,), (1.0,))[1].tolist() == [1.0] * 4
    assert anp.full_like(like, 2).dtype == np.float32 and anp.full((2,), 2.0).dtype == np.float64


def test_full_like_of_a_batched_array_under_vmap():
    out = autodiff.vmap(lambda c: anp.full_like(np.zeros(3), c))(np.arange(2.0))
    np.testing.assert_array_equal(out, [[0.0] * 3, [1.0] * 3])
