"""A pullback's program split where its cotangents come in (``autodiff._jit.split``), and ``grad(jit(f))`` built on it.

The two halves, run one after the other, must give the whole program's outputs bit for bit (the same equations on
the same values, in the same order), each equation in exactly one half; the residuals are what the late half
reads of the early one and nothing more.  Then ``grad(jit(f))``: its forward runs once per call (the pullback
reads the saved residuals), its gradients equal eager's to second order, through ``vmap`` and forward-over-reverse,
with a comparison's mask among the residuals, and a signature whose ``vjp`` has no program keeps the recomputing
pullback.
"""

import warnings

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import JitFallbackWarning
from autodiff.extend import defvjp, primitive
from tests.internals import Var, replay, split
from tests.jit.test_op_table import _first_case, _inputs, _loss
from tests.op_table import OPS


def _joint(f, n):
    """``(xs, cts) -> (f's value, its vjp at cts)`` for the first ``n`` arguments."""
    def joint(xs, cts):
        value, pullback = autodiff.vjp(f, *xs)
        return value, pullback(cts)

    return joint


def _halves_agree(program, n_early, early_outputs, inputs):
    early, late = split(program, n_early, early_outputs)
    whole = replay(program, inputs)
    first = replay(early, inputs[:n_early])
    n = len(early_outputs)
    second = replay(late, first[n:] + inputs[n_early:])
    got = first[:n] + second
    want = [whole[k] for k in early_outputs] + [o for k, o in enumerate(whole) if k not in early_outputs]
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert type(a) is type(b)
        np.testing.assert_array_equal(a, b, strict=True)
    made = [eq.out for eq in early.equations]
    assert len(made) + len(late.equations) <= len(program.equations)  # nothing runs twice
    late_reads = {a.ref for eq in late.equations for a in eq.operands if type(a) is Var}
    late_reads |= {o.ref for o in late.outputs if type(o) is Var}
    assert late_reads >= set(range(len(early.outputs) - n))  # every residual is read late
    return early, late


@pytest.mark.parametrize("op", [op for op in OPS if op.name in ("tanh", "matmul", "where", "maximum", "power",
                                                                   "linalg.norm", "sum", "divide", "exp", "sort")],
                         ids=repr)
def test_the_halves_of_an_op_tables_pullback_give_the_whole_programs_values_bit_for_bit(op):
    shapes, kwargs = _first_case(op)
    xs = _inputs(op, shapes, np.float64, 0)
    loss = _loss(op, kwargs)
    program = autodiff.jit(_joint(loss, len(xs)), passes=()).lower(xs, np.float64(1.0))  # each has a program
    inputs = _inputs(op, shapes, np.float64, 1) + [np.array(0.7)]  # other data than the trace's
    _halves_agree(program, len(xs), [0], inputs)


def test_a_forward_output_that_reads_a_late_input_is_refused_by_name():
    program = autodiff.jit(lambda x, g: (x * g, x + 1.0), passes=()).lower(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="output 0 of <lambda> depends on a late input"):
        split(program, 1, [0])


def test_the_residuals_are_the_forward_values_the_pullback_reads():
    def joint(x, g):
        s = anp.sin(x)
        anp.exp(x)  # read by nothing: in neither half
        return anp.sum(s * s), g * 2.0 * s * anp.cos(x)

    program = autodiff.jit(joint, passes=()).lower(np.ones(3), np.ones(()))
    assert "exp" in [e.prim.__name__ for e in program.equations]
    early, late = _halves_agree(program, 1, [0], [np.linspace(0, 1, 3), np.array(2.0)])
    assert "exp" not in [e.prim.__name__ for e in early.equations + late.equations]
    made = {e.out: e.prim.__name__ for e in program.equations}
    assert sorted(made[r.ref] for r in early.outputs[1:]) == ["cos", "sin"]  # 2.0 * s * cos(x) waits for g


# --- grad(jit(f)) -------------------------------------------------------------------------------------------------


def _counted():
    calls = []
    prim = primitive(lambda x: (calls.append(1), np.sin(x))[1], "counted_sin")
    defvjp(prim, lambda g, ans, x: g * anp.cos(x))
    return prim, calls


def test_grad_of_jit_runs_the_forward_once_per_call():
    counted, calls = _counted()

    def f(x):
        return anp.sum(anp.tanh(counted(x)) * x)

    jf, x = autodiff.jit(f), np.linspace(-1.0, 1.0, 5)
    autodiff.grad(jf)(x)  # traces
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal(5)
        calls.clear()
        g = autodiff.grad(jf)(x)
        assert len(calls) == 1  # the early half; the pullback reads its residuals
        np.testing.assert_allclose(g, autodiff.grad(f)(x), rtol=1e-12)


def _masked(x, w):
    """A comparison's mask and a kink, so a residual is a bool array."""
    return anp.sum(anp.where(x > 0.1, anp.tanh(x * w), x ** 2) + anp.maximum(x, 0.3 * w))


@pytest.mark.parametrize("transform", ["grad", "grad_of_grad", "hvp", "vmap_of_grad", "data_input"])
def test_grad_of_jit_equals_eager_under_every_outer_transform(transform):
    rng = np.random.default_rng(3)
    x, w, v = rng.standard_normal(6), rng.standard_normal(6), rng.standard_normal(6)
    jm = autodiff.jit(_masked)

    def run(f):
        if transform == "grad":
            return autodiff.grad(f)(x, w)
        if transform == "grad_of_grad":
            return autodiff.grad(lambda x: anp.sum(autodiff.grad(f, (0, 1))(x, w)[1] ** 2))(x)
        if transform == "hvp":
            return autodiff.jvp(lambda x: autodiff.grad(f)(x, w), (x,), (v,))[1]
        if transform == "vmap_of_grad":
            return autodiff.vmap(autodiff.grad(f), in_axes=(0, None))(rng.standard_normal((4, 6)) + 0 * x, w)
        return autodiff.grad(f, 1)(x, w)  # x is data: only w's cotangent

    rng = np.random.default_rng(4)
    got = run(jm)
    rng = np.random.default_rng(4)
    np.testing.assert_allclose(got, run(_masked), rtol=1e-12, atol=1e-14)
    assert autodiff.gradcheck(lambda x: jm(x, w), x, order=2)


def test_a_signature_whose_vjp_has_no_program_keeps_the_recomputing_pullback():
    """An op whose pullback reads its data has no vjp program: grad(jit(f)) still equals eager."""
    found = []
    for op in OPS:
        shapes, kwargs = _first_case(op)
        xs = _inputs(op, shapes, np.float64, 0)
        if len(xs) != 1:
            continue
        jg = autodiff.jit(autodiff.grad(_loss(op, kwargs)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JitFallbackWarning)
            jg(*xs)
        if jg.cache_info().fallbacks and _has_program(_loss(op, kwargs), xs):  # the value compiles, its vjp not
            found.append((op, kwargs, xs))
        if len(found) == 2:
            break
    assert found, "the op table has no op whose pullback reads its data and whose value compiles"
    for op, kwargs, xs in found:
        loss = _loss(op, kwargs)
        jl = autodiff.jit(loss)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JitFallbackWarning)
            for seed in (1, 2):
                x = _inputs(op, [np.shape(xs[0])], np.float64, seed)[0]
                np.testing.assert_allclose(autodiff.grad(jl)(x), autodiff.grad(loss)(x), rtol=1e-10, atol=1e-12)
            assert autodiff.gradcheck(jl, x, order=2)  # the function's own vjp, differentiated once more


def _has_program(f, xs):
    try:
        autodiff.jit(f).lower(*xs)
    except ValueError:
        return False
    return True


def test_a_shape_that_depends_on_the_data_falls_back_to_the_recomputing_pullback():
    def f(x):
        return anp.sum(anp.sin(x[x > 0]) ** 2)  # as many values as positive entries

    jf = autodiff.jit(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JitFallbackWarning)
        for x in (np.array([1.0, -2.0, 3.0]), np.array([1.0, 2.0, 3.0]), np.array([-1.0, -2.0, 0.5])):
            np.testing.assert_allclose(autodiff.grad(jf)(x), autodiff.grad(f)(x), rtol=1e-12)
