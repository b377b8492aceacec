"""Each example's key claim, against an independent answer; and each example run both ways, saving its figure."""

import os
import subprocess
import sys

import numpy as np
import pytest

import autodiff
from examples import (
    dp_sgd,
    fisher_kfac,
    gradient_norm_penalty,
    hessian_spectrum,
    maml,
    newton_cg,
    regularised_training,
    tied_gradients,
)
from tests.modes import REFERENCE
from traversal import trainables


def test_l2_penalty_equals_weight_decay_and_both_penalties_train():
    x, y = regularised_training.data()
    model, l2_curve = regularised_training.train(regularised_training.l2_loss, steps=60)
    _, l1_curve = regularised_training.train(regularised_training.l1_loss, steps=60)
    by_penalty, by_decay = regularised_training.penalty_equals_weight_decay(model, x, y)
    for a, b in zip(trainables(by_penalty), trainables(by_decay)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert l2_curve[-1] < l2_curve[0] and l1_curve[-1] < l1_curve[0]


def test_gradient_norm_penalty_matches_torch_double_backward():
    pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    model, curve = gradient_norm_penalty.train(steps=20)
    x, labels = gradient_norm_penalty.data()
    ours = trainables(autodiff.grad(gradient_norm_penalty.penalised)(model, x, labels))
    for a, b in zip(ours, gradient_norm_penalty.torch_gradients(model, x, labels)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)
    assert curve[-1] < curve[0]


def test_newton_cg_reaches_scipys_optimum():
    x, y = newton_cg.data()
    w, history = newton_cg.newton_cg(x, y)
    np.testing.assert_allclose(w, newton_cg.scipy_optimum(x, y), atol=1e-6)
    assert history[-1][1] < 1e-10


def test_lanczos_top_eigenvalue_equals_eigvalsh_of_the_dense_hessian():
    exact, top = hessian_spectrum.spectra()
    assert abs(top - exact[-1]) <= 1e-8 * abs(exact[-1])
    flat, loss = hessian_spectrum.problem()
    dense = autodiff.hessian(loss)(flat)
    g = autodiff.grad(loss)
    for k in (0, 7, 40):  # the dense Hessian itself, against differences of the gradient
        e = np.zeros(flat.size)
        e[k] = 1e-6
        np.testing.assert_allclose(dense[:, k], (g(flat + e) - g(flat - e)) / 2e-6, rtol=1e-5, atol=1e-7)


def test_maml_meta_loss_falls_and_meta_gradient_matches_torch():
    pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    model, curve = maml.train(steps=300)
    assert np.mean(curve[-30:]) < np.mean(curve[:30])
    batch = maml.tasks(np.random.default_rng(1), 3)
    ours = trainables(autodiff.grad(maml.meta_loss)(model, batch))
    for a, b in zip(ours, maml.torch_meta_gradient(model, batch)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-13)


def test_tied_array_counts_once_in_total_and_in_the_step():
    from optimisers import Descent, setup, update
    from traversal import total

    m = tied_gradients.model()
    ids, targets = tied_gradients.batch()
    g = autodiff.grad(tied_gradients.loss)(m, ids, targets)
    untied = tied_gradients.model()
    untied.head = type(untied.head)(untied.embed.weight.copy(), untied.head.bias)
    gu = autodiff.grad(tied_gradients.loss)(untied, ids, targets)
    tie_total = gu.embed.weight + gu.head.weight  # the tied matrix's true derivative
    np.testing.assert_allclose(g.embed.weight, tie_total, rtol=1e-12)
    assert g.head.weight is None
    distinct = [m.embed.weight, m.mix.weight, m.mix.bias, m.head.bias]
    assert total(np.size, m) == sum(a.size for a in distinct)
    expected = np.sqrt(sum(float((d ** 2).sum()) for d in [tie_total, gu.mix.weight, gu.mix.bias, gu.head.bias]))
    np.testing.assert_allclose(tied_gradients.global_norm(m, g), expected, rtol=1e-12)
    _, stepped = update(setup(Descent(0.5), m), m, g)
    assert stepped.embed.weight is stepped.head.weight
    np.testing.assert_allclose(stepped.embed.weight, m.embed.weight - 0.5 * tie_total, rtol=1e-12)



def _looped(loss, model, x, y):
    """The oracle for per-example gradients: one ``grad`` per example, each one's leaves in ``trainables`` order."""
    return [trainables(autodiff.grad(loss)(model, xi, yi)) for xi, yi in zip(x, y)]


def test_dp_sgd_per_example_gradients_clipping_and_noise():
    """Per-example gradients equal torch.func.vmap(grad) and a loop of grads; the clipped sum equals the loop's
    gradients each scaled by min(1, C/norm); the noise has standard deviation σC/B; a few private steps train."""
    pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    model, curve = dp_sgd.train(steps=10)
    x, y = (a[:dp_sgd.BATCH] for a in dp_sgd.data())
    per_example = dp_sgd.per_example_gradients(model, x, y)
    loop = _looped(dp_sgd.loss, model, x, y)
    for k, (got, theirs) in enumerate(zip(trainables(per_example), dp_sgd.torch_per_example_gradients(model, x, y))):
        np.testing.assert_allclose(got, theirs, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(got, np.stack([g[k] for g in loop]), rtol=1e-12, atol=1e-15)
    loop_norms = np.array([np.sqrt(sum(np.sum(a ** 2) for a in g)) for g in loop])
    np.testing.assert_allclose(dp_sgd.norms(per_example), loop_norms, rtol=1e-12)
    assert (loop_norms > dp_sgd.CLIP).any() and (loop_norms < dp_sgd.CLIP).any()  # both branches of the clip
    scale = np.minimum(1.0, dp_sgd.CLIP / loop_norms)
    want = [sum(s * g[k] for s, g in zip(scale, loop)) for k in range(len(loop[0]))]
    summed = trainables(dp_sgd.clipped_sum(per_example))
    for got, w in zip(summed, want):
        np.testing.assert_allclose(got, w, rtol=1e-11, atol=1e-14)
    quiet = trainables(dp_sgd.private_gradient(model, x, y, np.random.default_rng(0), noise=0.0))
    for got, w in zip(quiet, want):
        np.testing.assert_allclose(got, w / len(x), rtol=1e-11, atol=1e-14)
    rng = np.random.default_rng(1)
    residuals = np.concatenate([(a - b).ravel() for _ in range(10) for a, b in
                                zip(trainables(dp_sgd.private_gradient(model, x, y, rng)), quiet)])
    expected = dp_sgd.NOISE * dp_sgd.CLIP / len(x)
    assert abs(residuals.std() / expected - 1) < 0.1 and abs(residuals.mean()) < 0.1 * expected
    assert curve[-1, 0] < curve[0, 0]


def test_fisher_diagonal_and_kfac_factors_match_loops_of_grads():
    """The Fisher diagonal is the mean square of a loop of grads; for each Dense layer the loop's weight gradient
    is g aᵀ (and its bias gradient g) with the example's a and g; A and G are the loop's mean outer products;
    the exact Fisher block's diagonal is the weight's Fisher diagonal."""
    from layers import MLP

    x, y = fisher_kfac.data(n=24)
    model = MLP(fisher_kfac.SIZES, dtype=np.float64, seed=1)
    loop = _looped(fisher_kfac.loss, model, x, y)
    diagonal = trainables(fisher_kfac.fisher_diagonal(model, x, y))
    for k, got in enumerate(diagonal):
        np.testing.assert_allclose(got, np.mean([g[k] ** 2 for g in loop], axis=0), rtol=1e-11, atol=1e-16)
    for layer, leaf in ((0, 0), (2, 2)):  # model.layers[layer]'s weight is trainables' leaf, its bias the next
        a, g = fisher_kfac.layer_inputs_and_output_gradients(model, layer, x, y)
        for i, grads in enumerate(loop):
            np.testing.assert_allclose(grads[leaf], np.outer(g[i], a[i]), rtol=1e-11, atol=1e-15)
            np.testing.assert_allclose(grads[leaf + 1], g[i], rtol=1e-11, atol=1e-15)
        A, G = fisher_kfac.kfac_factors(model, layer, x, y)
        np.testing.assert_allclose(A, np.mean([np.outer(v, v) for v in a], axis=0), rtol=1e-12)
        np.testing.assert_allclose(G, np.mean([np.outer(v, v) for v in g], axis=0), rtol=1e-12, atol=1e-16)
        block = fisher_kfac.fisher_block(model, layer, x, y)
        np.testing.assert_allclose(np.diag(block), diagonal[leaf].ravel(), rtol=1e-11, atol=1e-16)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py") and f[0] != "_")


def _launch(command, cwd, figures):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # Short loops, and the numpy reference for the kernels (numba's are tested in-process): this checks
    # the ways of running an example, not its numbers.
    env.update(EXAMPLES_QUICK="1", EXAMPLES_FIGURES=str(figures), MPLBACKEND="Agg", AUTODIFF_ACCEL_OFF="kernels")
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.skipif(REFERENCE, reason="how an example runs (as a script, as a module, saving its figure) does not "
                    "depend on the mode, and its numbers are not checked here: the default mode runs these")
@pytest.mark.parametrize("name", EXAMPLES)
def test_each_example_runs_as_a_script_and_as_a_module_and_saves_its_figure(name, tmp_path):
    """``python examples/NAME.py`` from any folder and ``python -m examples.NAME`` from the root, side by side."""
    runs = {"script": (_launch([sys.executable, os.path.join(ROOT, "examples", name + ".py")], tmp_path,
                               tmp_path / "script"), tmp_path / "script"),
            "module": (_launch([sys.executable, "-m", f"examples.{name}"], ROOT, tmp_path / "module"),
                       tmp_path / "module")}
    for way, (process, figures) in runs.items():
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, f"{way}: {err[-2000:]}"
        png = figures / f"{name}.png"
        assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{way}: no figure saved"
        assert f"saved {png}" in out
