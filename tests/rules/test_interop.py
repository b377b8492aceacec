"""Plain numpy on traced values: routed to our rules, or refused with a TypeError naming the function."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff.nn import functional as F

X = np.array([[0.3, -0.5, 0.8], [0.1, 0.4, -0.9]])

ROUTED = [  # (numpy call, the same with autodiff.numpy): ufuncs, array functions, linalg
    (lambda x: np.sum(np.sin(x) * np.exp(x)), lambda x: anp.sum(anp.sin(x) * anp.exp(x))),
    (lambda x: np.mean(np.tanh(x), axis=0).sum(), lambda x: anp.mean(anp.tanh(x), axis=0).sum()),
    (lambda x: np.max(np.abs(x)), lambda x: anp.max(anp.abs(x))),
    (lambda x: np.linalg.norm(x), lambda x: anp.linalg.norm(x)),
    (lambda x: np.trace(np.dot(x, x.T)), lambda x: anp.trace(anp.dot(x, x.T))),
    (lambda x: np.einsum("ij,ij->", x, x), lambda x: anp.einsum("ij,ij->", x, x)),
    (lambda x: np.concatenate([x, x]).std(), lambda x: anp.std(anp.concatenate([x, x]))),
    (lambda x: np.maximum(x, 0.0).sum(), lambda x: anp.maximum(x, 0.0).sum()),
    (lambda x: np.where(x > 0, x, 0.1 * x).sum(), lambda x: anp.where(x > 0, x, 0.1 * x).sum()),
    (lambda x: np.float64(2.0) * np.sum(x), lambda x: 2.0 * anp.sum(x)),
    (lambda x: (np.ones(3) + x).sum(), lambda x: (1.0 + x).sum()),
    (lambda x: np.linalg.det(np.eye(3) + x.T @ x), lambda x: anp.linalg.det(np.eye(3) + x.T @ x)),
]


@pytest.mark.parametrize("case", range(len(ROUTED)))
def test_numpy_calls_record_like_ours(case):
    theirs, ours = ROUTED[case]
    np.testing.assert_allclose(autodiff.grad(theirs)(X), autodiff.grad(ours)(X), rtol=1e-12)
    assert autodiff.gradcheck(theirs, X, order=2)


REFUSED = [
    (lambda x: np.nanmedian(x).sum(), r"numpy\.nanmedian"),  # np.unwrap was here until it had rules
    (lambda x: np.add.reduce(x), r"numpy\.add\.reduce"),
    (lambda x: np.sin(x, out=np.empty_like(X)).sum(), r"numpy\.sin"),
    (lambda x: np.polyfit(np.arange(2.0), x, 1).sum(), r"numpy\.polyfit"),  # (numpy.fft is routed: test_fft.py)
    (lambda x: np.histogram(x)[0], r"numpy\.histogram"),  # np.median was here until issue 37 gave it rules
]


@pytest.mark.parametrize("case", range(len(REFUSED)))
def test_uncovered_numpy_is_refused_by_name(case):
    f, name = REFUSED[case]
    with pytest.raises(TypeError, match=name + r".*traced value.*autodiff\.numpy"):
        autodiff.grad(f)(X)


def test_asarray_and_array_refuse():
    for convert in (np.asarray, np.array, lambda x: x.__array__()):
        with pytest.raises(TypeError, match=r"np\.asarray.*detach.*stop_gradient"):
            autodiff.grad(lambda x, convert=convert: convert(x).sum())(X)


def test_never_an_object_array():
    def f(x):
        out = np.multiply(X, x)  # an ndarray on the left: routed, not an object array
        assert not isinstance(out, np.ndarray)
        return out.sum()

    np.testing.assert_allclose(autodiff.grad(f)(X), X)


def test_stop_gradient_is_a_constant():
    g = autodiff.grad(lambda x: anp.sum(x * autodiff.stop_gradient(x)))(X)
    np.testing.assert_allclose(g, X)


def test_functional_names_are_exported():
    assert {"logsumexp", "softmax", "log_softmax", "sigmoid", "relu", "softplus"} <= set(F.__all__)


def test_non_differentiable_helpers_take_traced_values_and_return_plain_results():
    seen = {}

    def f(x):
        seen["shape"], seen["ndim"], seen["size"] = anp.shape(x), anp.ndim(x), anp.size(x)
        seen["argmax"], seen["argsort"] = anp.argmax(x), anp.argsort(x, axis=1)
        seen["mask"], seen["finite"] = anp.greater(x, 0), anp.isfinite(x)
        seen["zeros"], seen["ones"] = anp.zeros_like(x), anp.ones_like(x)
        seen["np.argmin"] = np.argmin(x)
        return anp.sum(x * seen["mask"])

    g = autodiff.grad(f)(X)
    np.testing.assert_array_equal(g, (X > 0).astype(float))
    assert seen["shape"] == X.shape and seen["ndim"] == 2 and seen["size"] == 6
    assert seen["argmax"] == np.argmax(X) and seen["np.argmin"] == np.argmin(X)
    np.testing.assert_array_equal(seen["argsort"], np.argsort(X, axis=1))
    for key in ("mask", "finite", "zeros", "ones", "argsort"):
        assert type(seen[key]) is np.ndarray
