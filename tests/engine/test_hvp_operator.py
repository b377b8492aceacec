"""hvp_operator (issue 20): one recorded gradient applied to many vectors.

Oracles: ``hvp`` at the same point (every gallery model, several directions), the dense Hessian from
``autodiff.hessian`` read in ``destructure``'s order (eigenvalues, a linear solve, the diagonal and trace),
and gradcheck for the operator's own derivatives.
"""

import gc
import weakref

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import layers
from autodiff import grad, gradcheck, hessian, hvp, hvp_operator
from layers.losses import softmax_cross_entropy
from tests.gallery import gallery
from tests.tree_asserts import assert_same_tree
from tests.trees import leaves
from traversal import destructure, fmap, hessian_to_dense, isnumeric, total

scipy_linalg = pytest.importorskip("scipy.sparse.linalg", reason="scipy comes with pip install -e '.[test]'")


def _loss(m):
    """Couples every parameter (the squared sum of squares) and uses the non-trainable statistics too.

    The sum of squares goes through total's generic path (``_abs2``); the fused one, ``total(autodiff.sumsq,
    m)``, is checked against both in ``test_operator_and_hvp_agree_through_total_sumsq_on_a_complex_model``.
    """
    value = total(lambda p: anp.sum(anp.real(anp.sin(p) * p ** 2)), m) + total(_abs2, m) ** 2
    norm = m.get("norm") if isinstance(m, dict) else None
    if norm is not None:  # the BatchNorm-like gallery models: running statistics are variables, not parameters
        value = value + anp.sum(anp.cos(norm.running_mean) * norm.beta * norm.gamma)
    return value


def _abs2(p):
    return anp.sum(anp.real(p * anp.conj(p)))


def _cases():
    for name, model in gallery().items():
        if name == "one_array_in_two_arguments":  # the model as a pair of arguments, each its own variable
            yield name, (lambda a, b: _loss({"a": a, "b": b})), model
        else:
            yield name, _loss, (model,)


def _direction(model, seed):
    rng = np.random.default_rng(seed)
    return fmap(lambda p: np.asarray(rng.standard_normal(p.shape) + (1j * rng.standard_normal(p.shape)
                                                                        if p.dtype.kind == "c" else 0), p.dtype),
                model, exclude=isnumeric)


@pytest.mark.parametrize("name, f, args", list(_cases()), ids=[c[0] for c in _cases()])
def test_the_operator_equals_hvp_on_the_gallery_at_several_directions(name, f, args):
    nums = tuple(range(len(args)))
    op = hvp_operator(f, *args, argnums=nums)
    for seed in range(3):
        v = tuple(_direction(a, seed) for a in args)
        rtol = 1e-5 if name == "float32" else 1e-10
        assert_same_tree(op(v), hvp(f, args, v), rtol)
        assert_same_tree(op.matvec(v), op(v), rtol=0)


@pytest.mark.parametrize("name", [n for n in gallery() if n not in ("complex", "one_array_in_two_arguments")])
def test_the_parameter_vector_is_destructures_on_the_gallery(name):
    """Ties, non-trainable fields, ints, functions, views, float32: the flat order is destructure's."""
    model = gallery()[name]
    dense = hessian_to_dense(hessian(_loss)(model), model)
    linear = hvp_operator(_loss, model).as_linear_operator()
    assert linear.shape == dense.shape == (destructure(model)[0].size,) * 2
    if dense.size:
        np.testing.assert_allclose(linear @ np.eye(dense.shape[0]), dense, rtol=1e-5, atol=1e-6)


def test_value_and_gradient_come_with_the_operator():
    model = layers.MLP([3, 4, 2], dtype=np.float64)
    x = np.random.default_rng(0).standard_normal((5, 3))
    f = lambda m: anp.sum(m(x) ** 2)  # noqa: E731
    op = hvp_operator(f, model)
    assert op.value == f(model)
    want = grad(f)(model)
    for (path, a), (_, b) in zip(leaves(op.gradient), leaves(want)):
        assert (a is None) == (b is None), path
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)


def _tiny_mlp():
    model = layers.MLP([3, 4, 2], dtype=np.float64)
    rng = np.random.default_rng(1)
    x, labels = rng.standard_normal((6, 3)), rng.integers(0, 2, 6)
    return model, lambda m: softmax_cross_entropy(m(x), labels)


def test_the_linear_operator_is_the_dense_hessian_in_destructures_order():
    model, f = _tiny_mlp()
    dense = hessian_to_dense(hessian(f)(model), model)
    linear = hvp_operator(f, model).as_linear_operator()
    assert linear.shape == dense.shape == (destructure(model)[0].size,) * 2
    assert linear.dtype == np.float64
    np.testing.assert_allclose(linear @ np.eye(dense.shape[0]), dense, rtol=1e-10, atol=1e-13)


def test_eigsh_through_the_linear_operator_gives_the_dense_top_eigenvalues():
    model, f = _tiny_mlp()
    want = np.linalg.eigvalsh(hessian_to_dense(hessian(f)(model), model))
    linear = hvp_operator(f, model).as_linear_operator()
    got = scipy_linalg.eigsh(linear, k=4, which="LA", return_eigenvectors=False, tol=1e-12)
    np.testing.assert_allclose(np.sort(got), want[-4:], rtol=1e-8, atol=1e-10)
    low = scipy_linalg.eigsh(linear, k=2, which="SA", return_eigenvectors=False, tol=1e-12)
    np.testing.assert_allclose(np.sort(low), want[:2], rtol=1e-8, atol=1e-10)


def _ridge_logistic():
    """Logistic regression with an L2 penalty: a positive definite Hessian, as in an influence-function solve."""
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((40, 5)), rng.integers(0, 2, 40).astype(float)
    params = {"w": rng.standard_normal(5) * 0.3, "b": np.array([0.1])}

    def f(p):
        z = x @ p["w"] + p["b"]
        return anp.mean(anp.logaddexp(0.0, z) - y * z) + 0.05 * total(autodiff.sumsq, p)

    return params, f


def test_cg_through_the_linear_operator_solves_like_a_dense_solve():
    params, f = _ridge_logistic()
    dense = hessian_to_dense(hessian(f)(params), params)
    b = np.random.default_rng(3).standard_normal(dense.shape[0])
    b_before = b.copy()
    x, info = scipy_linalg.cg(hvp_operator(f, params).as_linear_operator(), b, rtol=1e-12, atol=0.0)
    assert info == 0
    np.testing.assert_allclose(x, np.linalg.solve(dense, b), rtol=1e-8)
    np.testing.assert_array_equal(b, b_before)


def test_hutchinson_is_exact_for_a_diagonal_hessian():
    x = np.random.default_rng(4).standard_normal(7)
    f = lambda x: anp.sum(anp.sin(x) * x ** 2)  # noqa: E731
    op = hvp_operator(f, x)
    want = np.diag(hessian(f)(x))
    for n in (1, 3):
        np.testing.assert_allclose(op.hutchinson(n, seed=n), want, rtol=1e-12)
        assert np.isclose(op.trace_estimate(n, seed=n), want.sum(), rtol=1e-12)


def test_hutchinson_converges_within_the_tolerance_of_its_sample_size():
    """Rademacher probes: entry i has variance sum_{j != i} H_ij² / n, the trace 2 sum_{i != j} H_ij² / n."""
    params, f = _ridge_logistic()
    dense = hessian_to_dense(hessian(f)(params), params)
    off = dense - np.diag(np.diag(dense))
    op = hvp_operator(f, params)
    n = 400
    diagonal = op.hutchinson(n, seed=0)
    got = np.concatenate([diagonal["w"], diagonal["b"]])  # destructure's order of the dict
    tolerance = 5 * np.sqrt((off ** 2).sum(axis=1) / n)
    assert np.all(tolerance < 0.5 * np.abs(np.diag(dense))), "the test must be able to fail"
    assert np.all(np.abs(got - np.diag(dense)) < tolerance)
    trace = op.trace_estimate(n, seed=0)
    assert abs(trace - np.trace(dense)) < 5 * np.sqrt(2 * (off ** 2).sum() / n)
    assert np.isclose(trace, got.sum(), rtol=1e-12)  # the same seed, the same probes


def test_estimators_skip_what_is_not_a_parameter():
    """The running statistics and a float field are variables of op(v), but not of the parameter vector."""
    model = gallery()["partly_trainable"]
    op = hvp_operator(_loss, model)
    assert op.shape == (destructure(model)[0].size,) * 2 == (6, 6)
    diagonal = op.hutchinson(2, seed=0)
    assert diagonal["norm"].running_mean is None and diagonal["norm"].beta.shape == (3,)


def test_float32_stays_float32():
    model = layers.MLP([3, 4, 2])  # float32
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    op = hvp_operator(lambda m: anp.sum(m(x) ** 2), model)
    assert op.dtype == np.float32 and op.as_linear_operator().dtype == np.float32
    assert op.as_linear_operator().matvec(np.ones(op.shape[0])).dtype == np.float32
    assert op.hutchinson(1, seed=0).layers[0].weight.dtype == np.float32


def test_several_argnums_and_has_aux():
    rng = np.random.default_rng(5)
    w, b, x = rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal((4, 3))

    def f(w, x, b):
        y = anp.tanh(x @ w + b)
        return anp.sum(y ** 2), {"y": y}

    op, aux = hvp_operator(f, w, x, b, argnums=(2, 0), has_aux=True)
    assert type(aux["y"]) is np.ndarray
    np.testing.assert_allclose(aux["y"], np.tanh(x @ w + b))
    vb, vw = rng.standard_normal(2), rng.standard_normal((3, 2))
    got = op((vb, vw))
    want = hvp(lambda b, w: f(w, x, b)[0], (b, w), (vb, vw))
    for a, c in zip(got, want):
        np.testing.assert_allclose(a, c, rtol=1e-12)
    assert op.shape == (8, 8)
    dense = op.as_linear_operator() @ np.eye(8)
    np.testing.assert_allclose(dense, dense.T, atol=1e-12)
    assert np.allclose(dense @ np.concatenate([vb, vw.ravel()]), np.concatenate([got[0], got[1].ravel()]))


def test_the_record_stays_protected_while_the_operator_lives():
    params, f = _ridge_logistic()
    w = params["w"]
    op = hvp_operator(f, params)
    linear = op.as_linear_operator()
    assert not w.flags.writeable  # w was writeable: only a hold makes it read-only (autodiff/_protection.py)
    ref = weakref.ref(op)
    del op
    gc.collect()
    assert ref() is not None and not w.flags.writeable  # the LinearOperator holds the operator
    linear.matvec(np.ones(6))
    del linear
    gc.collect()
    assert ref() is None and w.flags.writeable  # its flag comes back only when its last hold goes


def test_closed_over_data_is_protected_too_and_directions_are_never_changed():
    rng = np.random.default_rng(6)
    data, w = rng.standard_normal((5, 3)), rng.standard_normal(3)
    op = hvp_operator(lambda w: anp.sum(anp.tanh(data @ w) ** 2), w)
    with pytest.raises(ValueError, match="read-only"):
        data[0, 0] = 1.0
    v = rng.standard_normal(3)
    before = v.copy()
    op(v), op.hutchinson(2), op.as_linear_operator().matvec(v)
    np.testing.assert_array_equal(v, before)
    del op
    gc.collect()
    data[0, 0] = 1.0  # writable again


def test_a_result_never_aliases_its_direction():
    """For H = I a backward pass could hand v itself back; the caller's v must stay the caller's."""
    op = hvp_operator(lambda x: 0.5 * anp.sum(x * x), np.ones(3))
    v = np.arange(3.0)
    hv = op(v)
    np.testing.assert_array_equal(hv, v)
    assert not np.shares_memory(hv, v)


def test_the_operator_is_differentiable_in_the_primals():
    """Third derivatives: the operator built inside an outer grad records on the outer tape."""
    rng = np.random.default_rng(7)
    x, v = rng.standard_normal(4), rng.standard_normal(4)
    f = lambda x: anp.sum(anp.sin(x) * x ** 3) + anp.sum(x) ** 3  # noqa: E731
    assert gradcheck(lambda x: hvp_operator(f, x)(v), x)
    assert gradcheck(lambda x: hvp_operator(f, x).trace_estimate(3, seed=0), x)
    want = grad(lambda x: hvp(f, x, v) @ v)(x)
    np.testing.assert_allclose(grad(lambda x: hvp_operator(f, x)(v) @ v)(x), want, rtol=1e-10)


def test_bad_input_raises_naming_the_operator():
    model, f = _tiny_mlp()
    op = hvp_operator(f, model)
    v = fmap(np.ones_like, model, exclude=isnumeric)
    with pytest.raises(ValueError, match=r"hvp_operator: tangent\.layers\[0\]\.weight is of shape \(3, 4\).*\(4, 3\)"):
        op(fmap(lambda a: np.ones(a.shape[::-1]), v, exclude=isnumeric))
    with pytest.raises(ValueError, match=r"hvp_operator\.hutchinson: n=0 probes"):
        op.hutchinson(0)
    with pytest.raises(ValueError, match=r"hvp_operator: argnums=\(0, 0\) names argument 0 twice"):
        hvp_operator(f, model, argnums=(0, 0))
    with pytest.raises(ValueError, match=r"hvp_operator: argnums=1 is out of range .* 1 positional"):
        hvp_operator(f, model, argnums=1)
    with pytest.raises(TypeError, match=r"hvp_operator\(\.\.\., has_aux=True\): the function must return a pair"):
        hvp_operator(f, model, has_aux=True)
    pair = hvp_operator(lambda a, b: anp.sum(a * b) ** 2, np.ones(2), np.ones(2), argnums=(0, 1))
    with pytest.raises(ValueError, match=r"hvp_operator: .*argnums=\(0, 1\).*tuple of 2 directions.*ndarray"):
        pair(np.ones(2))


def test_complex_parameters_have_no_linear_operator():
    z = np.array([1.0 + 2.0j, -0.5j])
    op = hvp_operator(lambda z: anp.sum(anp.abs(z) ** 4), z)
    (want,) = hvp(lambda z: anp.sum(anp.abs(z) ** 4), (z,), (np.ones(2, complex),))
    np.testing.assert_allclose(op(np.ones(2, complex)), want, rtol=1e-12)  # op(v) itself works
    for call in (op.as_linear_operator, lambda: op.hutchinson(1), lambda: op.trace_estimate(1)):
        with pytest.raises(TypeError, match=r"hvp_operator\.\w+: the parameters are complex.*real and imaginary"):
            call()


def test_operator_and_hvp_agree_through_total_sumsq_on_a_complex_model():
    """Against central differences of the gradient.  (hvp once disagreed here: total's fused sumsq JVP
    conjugated the tangent of a complex parameter; it now pairs as Re Σ c·t, as the engine does.)"""
    z = {"c": np.array([0.3 + 0.7j, -1.1 + 0.2j])}
    v = {"c": np.array([0.2 - 0.5j, -0.1 + 1.1j])}
    f = lambda m: anp.real(total(autodiff.sumsq, m)) ** 2  # noqa: E731
    eps = 1e-6
    shifted = [grad(f)({"c": z["c"] + s * eps * v["c"]})["c"] for s in (1, -1)]
    numeric = (shifted[0] - shifted[1]) / (2 * eps)
    np.testing.assert_allclose(hvp_operator(f, z)(v)["c"], numeric, rtol=1e-7)
    np.testing.assert_allclose(hvp(f, z, v)["c"], numeric, rtol=1e-7)
