"""Complex parameters step as torch.optim steps them (issue 36): along the conjugate of our ``grad`` (which is
``dL/dRe - i dL/dIm``, docs/complex.md), with Adam's moments and ClipGrad's clamp taken on the real and imaginary
parts apart (torch's ``view_as_real``), in every rule and chain; checked against torch on the same loss and
inputs over several steps, to ~1e-12 in complex128."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from optimisers import (
    Adam,
    AdamW,
    ClipGrad,
    ClipNorm,
    Descent,
    Momentum,
    Nesterov,
    OptimiserChain,
    SignDecay,
    WeightDecay,
    setup,
    update,
)

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")

_rng = np.random.default_rng(0)
_X = _rng.standard_normal((6, 3)) + 1j * _rng.standard_normal((6, 3))
_Y = _rng.standard_normal((6, 2)) + 1j * _rng.standard_normal((6, 2))
_START = {"w": _rng.standard_normal((3, 2)) + 1j * _rng.standard_normal((3, 2)),
          "b": _rng.standard_normal(2) + 1j * _rng.standard_normal(2)}


def _loss(m):
    """A real loss of complex parameters, not holomorphic in them: a least-squares fit plus a phase term."""
    r = _X @ m["w"] + m["b"] - _Y
    return anp.sum(anp.abs(r) ** 2) + anp.sum(anp.real(m["w"]) * anp.imag(m["w"]))


def _torch_loss(m):
    r = torch.tensor(_X) @ m["w"] + m["b"] - torch.tensor(_Y)
    return torch.sum(torch.abs(r) ** 2) + torch.sum(m["w"].real * m["w"].imag)


def _clamp_parts(delta):
    """torch's clamp refuses complex tensors; on the real view (as its Adam steps them) it clamps each part."""
    return lambda ps: [torch.view_as_real(p.grad).clamp_(-delta, delta) for p in ps]


def _add_sgn(lam):
    return lambda ps: [p.grad.add_(torch.sgn(p.detach()), alpha=lam) for p in ps]


CASES = {  # rule -> (torch optimiser, what to do to the gradients before its step)
    "Descent": (Descent(0.01), lambda p: torch.optim.SGD(p, lr=0.01), None),
    "Momentum": (Momentum(0.01, 0.9), lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9), None),
    "Nesterov": (Nesterov(0.01, 0.8), lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.8, nesterov=True), None),
    "Adam": (Adam(0.05, 0.8, 0.99, 1e-7), lambda p: torch.optim.Adam(p, lr=0.05, betas=(0.8, 0.99), eps=1e-7), None),
    "AdamW": (AdamW(0.05, 0.9, 0.999, 1e-8, 0.1),
              lambda p: torch.optim.AdamW(p, lr=0.05, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1), None),
    "WeightDecay": (OptimiserChain(WeightDecay(0.2), Descent(0.01)),
                    lambda p: torch.optim.SGD(p, lr=0.01, weight_decay=0.2), None),
    "SignDecay": (OptimiserChain(SignDecay(0.3), Descent(0.01)), lambda p: torch.optim.SGD(p, lr=0.01),
                  _add_sgn(0.3)),
    "ClipGrad": (OptimiserChain(ClipGrad(2.0), Descent(0.01)), lambda p: torch.optim.SGD(p, lr=0.01),
                 _clamp_parts(2.0)),
    "ClipNorm": (OptimiserChain(ClipNorm(3.0), Adam(0.05)), lambda p: torch.optim.Adam(p, lr=0.05),
                 lambda ps: torch.nn.utils.clip_grad_norm_(ps, 3.0)),
    "chain": (OptimiserChain(WeightDecay(0.1), ClipNorm(5.0), Momentum(0.01, 0.5)),
              lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.5),
              lambda ps: [[p.grad.add_(p.detach(), alpha=0.1) for p in ps], torch.nn.utils.clip_grad_norm_(ps, 5.0)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_complex_parameters_step_as_torch_optim_steps_them(name):
    rule, make_torch, before_step = CASES[name]
    model = {k: v.copy() for k, v in _START.items()}
    state = setup(rule, model)
    params = {k: torch.tensor(v.copy(), requires_grad=True) for k, v in _START.items()}
    opt = make_torch(list(params.values()))
    for step in range(6):
        state, model = update(state, model, autodiff.grad(_loss)(model))
        opt.zero_grad()
        _torch_loss(params).backward()
        if before_step:
            before_step(list(params.values()))
        opt.step()
        for k, p in params.items():
            assert model[k].dtype == np.complex128
            np.testing.assert_allclose(model[k], p.detach().numpy(), rtol=1e-12, atol=1e-12,
                                       err_msg=f"{name}, step {step + 1}, {k}")


@pytest.mark.parametrize("name", ["Descent", "Adam"])
def test_complex_descent_converges_where_it_diverged(name):
    """The issue's symptom: 100 steps of Descent diverged (Im about 1.6e8); they now lower the loss, as torch's."""
    rule = {"Descent": Descent(0.01), "Adam": Adam(0.05)}[name]
    model = {k: v.copy() for k, v in _START.items()}
    state, first = setup(rule, model), _loss(model)
    for _ in range(100):
        state, model = update(state, model, autodiff.grad(_loss)(model))
    assert np.isfinite(_loss(model)) and _loss(model) < first / 2


def test_complex64_keeps_its_dtype_and_follows_torch():
    model = {k: v.astype(np.complex64) for k, v in _START.items()}
    state = setup(Adam(0.05), model)
    params = {k: torch.tensor(v.copy(), requires_grad=True) for k, v in model.items()}
    opt = torch.optim.Adam(list(params.values()), lr=0.05)
    for _ in range(3):
        grads = autodiff.grad(_loss)(model)
        state, model = update(state, model, grads)
        for k, p in params.items():
            p.grad = torch.tensor(np.conj(grads[k]))  # the same gradient, in torch's convention
        opt.step()
    for k, p in params.items():
        assert model[k].dtype == np.complex64 and all(a.dtype == np.complex64 for a in state[k].state[:2])
        np.testing.assert_allclose(model[k], p.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["Descent", "Adam", "ClipGrad", "ClipNorm"])
def test_complex_steps_stay_differentiable(name):
    """The conjugate and the per-part operations are written in differentiable ops: the loss after two inner
    steps (MAML-style, second order through the inner gradients) passes gradcheck at complex parameters."""
    rule = CASES[name][0]

    def after_two_steps(m):
        state = setup(rule, m)
        for _ in range(2):
            state, m = update(state, m, autodiff.grad(_loss)(m))
        return _loss(m)

    assert autodiff.gradcheck(after_two_steps, _START)
