"""A 0-d array parameter (a learned scale or temperature) through nested transforms.

numpy gives a scalar for arithmetic on a 0-d array, and a scalar is no parameter to ``traversal``: a gradient
entry that came back as one was silently skipped by ``total``, ``trainables`` and ``destructure``, so the
README's gradient penalty ``total(sumsq, grad(loss)(m))`` lost the 0-d entry under an outer transform.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, hvp, hvp_operator, jvp, value_and_grad
from traversal import destructure, hessian_to_dense, total, trainables


def model():
    return {"w": np.array([0.5, -1.0]), "s": np.array(0.7)}


def loss(m):
    return anp.sum(anp.sin(m["w"]) * m["s"] ** 3)


def penalty(m):
    return total(autodiff.sumsq, grad(loss)(m))


def test_penalty_under_grad_keeps_the_0d_entry_and_matches_torch():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    m = model()
    value, g = value_and_grad(penalty)(m)
    w = torch.tensor(m["w"], requires_grad=True)
    s = torch.tensor(m["s"], requires_grad=True)
    gw, gs = torch.autograd.grad((torch.sin(w) * s ** 3).sum(), (w, s), create_graph=True)
    expected = (gw ** 2).sum() + gs ** 2
    tw, ts = torch.autograd.grad(expected, (w, s))
    np.testing.assert_allclose(value, expected.item(), rtol=1e-12)
    np.testing.assert_allclose(g["w"], tw.numpy(), rtol=1e-12)
    np.testing.assert_allclose(g["s"], ts.item(), rtol=1e-12)
    assert type(g["s"]) is np.ndarray and g["s"].shape == ()


def test_penalty_gradient_passes_gradcheck():
    assert autodiff.gradcheck(penalty, model(), order=2)


def test_inner_gradient_is_a_parameter_under_every_outer_transform():
    m = model()
    seen = []

    def probe(m):
        seen.append(len(trainables(grad(loss)(m))))
        return loss(m)

    grad(probe)(m)
    jvp(probe, (m,), (model(),))
    assert seen == [2, 2]
    assert jvp(penalty, (m,), (model(),))[0] == pytest.approx(penalty(m), rel=1e-14)


@pytest.mark.parametrize("mode", ["reverse_over_forward", "forward_over_reverse"])
def test_hvp_of_a_0d_parameter_is_an_array_in_both_modes(mode):
    m, v = model(), {"w": np.array([1.0, 2.0]), "s": np.array(-0.5)}
    hv = hvp(loss, m, v, mode=mode)
    flat, _ = destructure(hv)
    dense = hessian_to_dense(autodiff.hessian(loss)(m), m)
    np.testing.assert_allclose(flat, dense @ destructure(v)[0], rtol=1e-12)
    assert type(hv["s"]) is np.ndarray and hv["s"].shape == ()


def test_hvp_operator_keeps_0d_entries_in_its_gradient_and_diagonal():
    m = model()
    op = hvp_operator(loss, m)
    assert type(op.gradient["s"]) is np.ndarray
    np.testing.assert_allclose(destructure(op.gradient)[0], destructure(grad(loss)(m))[0], rtol=1e-14)
    diagonal = op.hutchinson(8, seed=3)
    assert type(diagonal["s"]) is np.ndarray and destructure(diagonal)[0].size == 3
    assert destructure(diagonal)[0].sum() == pytest.approx(op.trace_estimate(8, seed=3), rel=1e-12)
