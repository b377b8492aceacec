"""A representative subset of autodiff.numpy against PyTorch on identical inputs, plus the cases users
trip on: repeated-index scatter-add, stable logsumexp/softmax at ±1000, and ties."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff.nn import functional as F

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")

rng = np.random.default_rng(7)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((3, 4))
SQ = rng.standard_normal((3, 3)) + 3 * np.eye(3)
SPD = SQ @ SQ.T
V = rng.standard_normal(3)

CASES = {
    "maximum": ((A, B), lambda a, b: anp.maximum(a, b), lambda a, b: torch.maximum(a, b)),
    "logaddexp": ((A, B), anp.logaddexp, torch.logaddexp),
    "arctan2": ((A, B), anp.arctan2, torch.atan2),
    "hypot": ((A, B), anp.hypot, torch.hypot),
    "clip": ((A,), lambda a: anp.clip(a, -0.3, 0.4), lambda a: torch.clamp(a, -0.3, 0.4)),
    "prod": ((A,), lambda a: anp.prod(a, axis=1), lambda a: torch.prod(a, dim=1)),
    "max axis": ((A,), lambda a: anp.max(a, axis=0), lambda a: torch.amax(a, dim=0)),
    "std": ((A,), lambda a: anp.std(a, axis=1, ddof=1), lambda a: torch.std(a, dim=1)),
    "cumsum": ((A,), lambda a: anp.cumsum(a, axis=1), lambda a: torch.cumsum(a, dim=1)),
    "cumprod": ((A,), lambda a: anp.cumprod(a, axis=0), lambda a: torch.cumprod(a, dim=0)),
    "einsum": ((A, B), lambda a, b: anp.einsum("ij,kj->ik", a, b),
               lambda a, b: torch.einsum("ij,kj->ik", a, b)),
    "norm ord 1": ((A,), lambda a: anp.linalg.norm(a, 1, axis=1),
                   lambda a: torch.linalg.vector_norm(a, 1, dim=1)),
    "norm fro": ((A,), lambda a: anp.linalg.norm(a), lambda a: torch.linalg.norm(a)),
    "solve": ((SQ, V), anp.linalg.solve, torch.linalg.solve),
    "inv": ((SQ,), anp.linalg.inv, torch.linalg.inv),
    "det": ((SQ,), anp.linalg.det, torch.linalg.det),
    "slogdet": ((SQ,), lambda a: anp.linalg.slogdet(a)[1], lambda a: torch.linalg.slogdet(a)[1]),
    "cholesky": ((SPD,), anp.linalg.cholesky, torch.linalg.cholesky),
    "log_softmax": ((A,), lambda a: F.log_softmax(a, axis=1), lambda a: torch.log_softmax(a, dim=1)),
    "sigmoid": ((A * 50,), F.sigmoid, torch.sigmoid),
    "softplus": ((A * 50,), F.softplus, torch.nn.functional.softplus),
    "tile": ((V,), lambda v: anp.tile(v, (2, 2)), lambda v: v.repeat(2, 2)),
    "pad": ((A,), lambda a: anp.pad(a, 1), lambda a: torch.nn.functional.pad(a, (1, 1, 1, 1))),
}


def _compare(args, ours, theirs, weight_seed=0):
    """Gradients of sum(w * f(args)) with the same random weights w, ours against torch."""
    out = ours(*args)
    w = np.random.default_rng(weight_seed).standard_normal(np.shape(out))
    g_ours = autodiff.grad(lambda *xs: anp.sum(ours(*xs) * w), argnums=tuple(range(len(args))))(*args)
    ts = [torch.tensor(a, requires_grad=True) for a in args]
    (theirs(*ts) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(out, theirs(*[torch.tensor(a) for a in args]).numpy(), rtol=1e-10, atol=1e-12)
    for mine, t in zip(g_ours, ts):
        np.testing.assert_allclose(mine, t.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    _compare(*CASES[name])


def test_repeated_indices_accumulate_like_torch():
    x = rng.standard_normal(5)
    idx = np.array([0, 3, 0, 0, 4, 3])
    weights = np.arange(1.0, 7.0)
    _compare((x,), lambda x: x[idx] * weights, lambda x: x[torch.tensor(idx)] * torch.tensor(weights))
    _compare((A,), lambda a: anp.take(a, idx[:4] % 4, axis=1), lambda a: a[:, torch.tensor(idx[:4] % 4)])
    mask = A > 0
    _compare((A,), lambda a: a[mask] ** 2, lambda a: a[torch.tensor(mask)] ** 2)


@pytest.mark.parametrize("scale", [1000.0, -1000.0])
def test_stable_logsumexp_and_softmax_at_1000(scale):
    x = np.array([[1.0, 2.0, 3.0], [0.5, -0.5, 0.0]]) * scale
    _compare((x,), lambda a: F.logsumexp(a, axis=1), lambda a: torch.logsumexp(a, dim=1))
    _compare((x,), lambda a: F.softmax(a, axis=1), lambda a: torch.softmax(a, dim=1))
    _compare((x,), lambda a: F.log_softmax(a, axis=1), lambda a: torch.log_softmax(a, dim=1))
    assert np.isfinite(F.logsumexp(x)) and np.all(np.isfinite(F.softmax(x)))


def test_ties_in_maximum_minimum_and_where():
    a = np.array([1.0, 2.0, 3.0, -1.0])
    b = np.array([1.0, 0.0, 3.0, 2.0])  # ties at 0 and 2
    _compare((a, b), anp.maximum, torch.maximum)
    _compare((a, b), anp.minimum, torch.minimum)
    _compare((a, b), lambda x, y: anp.where(x >= y, x, y), lambda x, y: torch.where(x >= y, x, y))
    same = np.array([0.5, -0.5])
    g = autodiff.grad(lambda x: anp.sum(anp.maximum(x, x)))(same)
    t = torch.tensor(same, requires_grad=True)
    torch.maximum(t, t).sum().backward()
    np.testing.assert_allclose(g, t.grad.numpy())
    x = np.array([3.0, 1.0, 3.0])
    _compare((x,), lambda v: anp.max(v), lambda v: torch.amax(v))


def test_norm_at_the_zero_vector_has_torchs_zero_gradient():
    from traversal import total

    z = np.zeros(3)
    t = torch.tensor(z, requires_grad=True)
    torch.linalg.vector_norm(t).backward()
    np.testing.assert_array_equal(autodiff.grad(anp.linalg.norm)(z), t.grad.numpy())
    np.testing.assert_array_equal(autodiff.grad(lambda m: total(anp.linalg.norm, m))({"w": z})["w"], t.grad.numpy())
