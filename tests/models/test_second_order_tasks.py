"""The second-order suite's programs (issue 20, item 5), nothing timed.

Each task's ``ours()`` equals every torch variant through the task's own check; each ``check`` catches a
small error; ``ours()`` is repeatable (the harness calls it many times); and ``ours()`` is right against
an oracle that takes another road, mostly on a tiny version built by the same setup function: ``eigvalsh``
of the dense Hessian (``autodiff.hessian``, forward over reverse), the Gauss-Newton matrix assembled from
a dense Jacobian and the closed-form loss Hessian, per-example gradients by hand, central finite
differences, ``np.linalg.solve`` of the closed-form logistic Hessian, ``zᵀHz`` with the dense Hessian, and the
closed-form input Jacobian ``W1 diag(1 - h²) W0`` of each example.
"""


import numpy as np
import pytest
from scipy.linalg import block_diag

import autodiff
from bench import _so_krylov
from bench.second_order_tasks import (
    SETUPS,
    convnet_eigenvalues,
    ggn_product,
    hutchinson_trace,
    influence_cg,
    input_jacobians,
    logistic_grad_1d,
    maml_meta_step,
    per_example_gradients,
    tasks,
)
from traversal import destructure, hessian_to_dense, trainables

WITH_TORCH = [s for s in SETUPS if s is not logistic_grad_1d]  # the 1-D row compares ours with ours
TINY = {  # each task built small by its own setup function: for the oracles and the cheap checks
    convnet_eigenvalues: dict(image=8, channels=(2, 2), hidden=6, batch=4),  # 182 parameters
    ggn_product: dict(sizes=(5, 4, 3), batch=6),
    per_example_gradients: dict(sizes=(5, 4, 3), batch=6),
    maml_meta_step: dict(sizes=(1, 3, 1), meta_batch=2, k=4),
    influence_cg: dict(d=6, n=40, steps=6),
    logistic_grad_1d: dict(d=7, n=30),
    hutchinson_trace: dict(sizes=(4, 3, 2), batch=5),
    input_jacobians: dict(sizes=(5, 4, 3), batch=6),
}


@pytest.fixture
def torch():
    """torch with one intra-op thread, as the bench runs it (``try_torch(threads=1)``), restored afterwards."""
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(threads)


@pytest.mark.parametrize("size", ["bench", "tiny"])
@pytest.mark.parametrize("setup", WITH_TORCH, ids=[s.__name__ for s in WITH_TORCH])
def test_ours_equals_every_torch_variant(setup, size, torch):
    task = setup(torch, **(TINY[setup] if size == "tiny" else {}))
    assert len(task.torch_variants) >= 1
    ours = task.ours()
    for name, variant in task.torch_variants.items():
        theirs = variant()
        assert all(isinstance(r, np.ndarray) for r in theirs), name
        task.check(ours, theirs)


def test_the_1d_grad_row_equals_its_column_twin_and_is_labelled_as_ours():
    task = logistic_grad_1d(None)
    ((name, column),) = task.torch_variants.items()
    assert "not torch" in name and "both ours" in task.name and task.goal == 1.2
    task.check(task.ours(), column())


def test_without_torch_only_ours_is_built():
    built = tasks(None)
    assert [t.torch_variants == {} for t in built] == [s is not logistic_grad_1d for s in SETUPS]
    assert len({t.name for t in built}) == len(built)


def _perturbed(result):
    """The result with its first array off by 1e-4 relative: beyond every task's tolerance (the loosest is
    the convnet's, twice ARPACK's tol of 1e-6)."""
    bad = [np.array(r, dtype=np.float64, copy=True) for r in result]
    bad[0] = bad[0] * (1 + 1e-4) + 1e-4
    return type(result)(bad) if isinstance(result, tuple) else bad


@pytest.mark.parametrize("setup", SETUPS, ids=[s.__name__ for s in SETUPS])
def test_ours_is_repeatable_and_the_check_catches_a_small_error(setup):
    task = setup(None, **TINY[setup])
    first, second = task.ours(), task.ours()
    assert all(isinstance(r, np.ndarray) for r in first)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    task.check(first, second)
    with pytest.raises(AssertionError):
        task.check(_perturbed(first), second)


def test_the_convnet_check_refuses_a_different_number_of_products():
    task = convnet_eigenvalues(None, **TINY[convnet_eigenvalues])
    values, count = task.ours()
    assert count > task.problem["k"]  # Lanczos needs more products than eigenvalues
    with pytest.raises(AssertionError, match="different work"):
        task.check((values, count + 1), (values, count))


# --- Oracles on tiny versions ----------------------------------------------------------------------------


def _dense_hessian(problem):
    model = problem["model"]
    h = autodiff.hessian(problem["loss"])(model, problem["x"], problem["labels"])
    return hessian_to_dense(h, model)


def test_convnet_eigenvalues_are_the_top_of_the_dense_spectrum():
    task = convnet_eigenvalues(None, **TINY[convnet_eigenvalues])
    p = task.problem
    exact = np.linalg.eigvalsh(_dense_hessian(p))[-p["k"]:]
    assert exact.size == p["k"] and sum(a.size for a in trainables(p["model"])) == 182
    # ARPACK's stopping rule bounds each Ritz value's error by tol times its size.
    np.testing.assert_allclose(task.ours()[0], exact, rtol=2 * p["tol"], atol=0)


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_ggn_product_is_the_closed_form_gauss_newton_matrix_times_v():
    task = ggn_product(None, **TINY[ggn_product])
    p = task.problem
    flat, rebuild = destructure(p["model"])
    jac = autodiff.jacobian(lambda w: rebuild(w)(p["x"]))(flat).reshape(-1, flat.size)  # (batch * classes, n)
    probs = _softmax(p["model"](p["x"]))
    # The mean cross-entropy's Hessian in the logits: one (diag(p) - p pᵀ) / batch block per example.
    h_loss = block_diag(*[(np.diag(q) - np.outer(q, q)) / len(probs) for q in probs])
    v = np.concatenate([a.ravel() for a in trainables(p["v"])])
    expected = jac.T @ h_loss @ jac @ v
    np.testing.assert_allclose(np.concatenate([a.ravel() for a in task.ours()]), expected, rtol=1e-10, atol=1e-13)


def _per_example_by_hand(model, x, labels):
    """Backpropagation for one hidden tanh layer and softmax cross-entropy, one example per row."""
    w0, b0, w1, b1 = trainables(model)
    h = np.tanh(x @ w0.T + b0)
    d = _softmax(h @ w1.T + b1) - np.eye(w1.shape[0])[labels]
    dh = (d @ w1) * (1 - h * h)
    grads = [dh[:, :, None] * x[:, None, :], dh, d[:, :, None] * h[:, None, :], d]
    return grads + [np.mean(g * g, axis=0) for g in grads]


def test_per_example_gradients_and_fisher_match_backpropagation_by_hand():
    task = per_example_gradients(None, **TINY[per_example_gradients])
    p = task.problem
    expected = _per_example_by_hand(p["model"], p["x"], p["labels"])
    ours = task.ours()
    assert len(ours) == len(expected) == 8
    for a, b in zip(ours, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)



def test_per_example_input_jacobians_are_the_closed_form():
    task = input_jacobians(None, **TINY[input_jacobians])
    (jac,) = task.ours()
    w0, b0, w1, _ = trainables(task.problem["model"])
    x = task.problem["x"]
    h = np.tanh(x @ w0.T + b0)
    expected = np.einsum("oh,nh,hi->noi", w1, 1 - h * h, w0)
    assert jac.shape == (len(x), w1.shape[0], w0.shape[1])
    np.testing.assert_allclose(jac, expected, rtol=1e-12, atol=1e-15)

def test_maml_meta_gradient_matches_central_differences():
    task = maml_meta_step(None, **TINY[maml_meta_step])
    meta_loss, model = task.problem["meta_loss"], task.problem["model"]
    flat, rebuild = destructure(model)
    h = 1e-6
    steps = np.eye(flat.size) * h
    fd = [(meta_loss(rebuild(flat + e)) - meta_loss(rebuild(flat - e))) / (2 * h) for e in steps]
    ours = task.ours()
    assert float(ours[0]) == float(meta_loss(model))
    # Central differences: truncation ~h² and rounding ~eps * loss / h, both far below 1e-6 here.
    np.testing.assert_allclose(np.concatenate([g.ravel() for g in ours[1:]]), fd, rtol=1e-6, atol=1e-8)


def _logistic_hessian(problem):
    """The closed form ``Xᵀ diag(σ(m)(1 - σ(m))) X / N + λ I`` with margins ``m = -y X w``."""
    x, y, w = problem["x"], problem["y"], problem["w"]
    s = 1 / (1 + np.exp(y * (x @ w)))
    return x.T @ ((s * (1 - s))[:, None] * x) / len(y) + problem["lam"] * np.eye(len(w))


def test_cg_with_as_many_steps_as_dimensions_solves_the_closed_form_system():
    task = influence_cg(None, **TINY[influence_cg])
    p = task.problem
    np.testing.assert_allclose(task.ours()[0], np.linalg.solve(_logistic_hessian(p), p["b"]), rtol=1e-8)


def test_ten_cg_steps_equal_ten_steps_on_the_dense_closed_form_hessian():
    task = influence_cg(None)
    p = task.problem
    h = _logistic_hessian(p)
    expected = _so_krylov.conjugate_gradient(lambda v: h @ v, p["b"], p["steps"])
    np.testing.assert_allclose(task.ours()[0], expected, rtol=1e-9, atol=1e-12)
    residual = np.linalg.norm(h @ expected - p["b"]) / np.linalg.norm(p["b"])
    assert residual < 1e-2  # ten steps make real progress: the task is an honest solve, not noise


def test_both_1d_and_column_grads_equal_the_closed_form_gradient():
    task = logistic_grad_1d(None, **TINY[logistic_grad_1d])
    p = task.problem
    x, y, w = p["x"], p["y"], p["w"]
    expected = -x.T @ (y / (1 + np.exp(y * (x @ w)))) / len(y) + p["lam"] * w
    np.testing.assert_allclose(task.ours()[0], expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(next(iter(task.torch_variants.values()))()[0], expected, rtol=1e-12, atol=1e-15)


def test_hutchinson_estimate_is_the_mean_of_z_h_z_over_the_same_probes():
    task = hutchinson_trace(None, **TINY[hutchinson_trace])
    p = task.problem
    dense = _dense_hessian(p)
    z = _so_krylov.rademacher(dense.shape[0], p["probes"], p["seed"])
    assert z.shape == (16, dense.shape[0]) and set(np.unique(z)) == {-1.0, 1.0}
    expected = np.mean([probe @ dense @ probe for probe in z])
    np.testing.assert_allclose(task.ours()[0], expected, rtol=1e-10)
