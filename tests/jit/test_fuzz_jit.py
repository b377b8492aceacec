"""jit against eager on the differential fuzzer's random programs: the passes together, on programs no one wrote.

The op table (``tests/jit/test_op_table.py``) puts one op at a time under jit; the passes' interactions (CSE
merging two steps, fusion cutting a run whose values are read later, buffer planning writing into a value that
another step still reads, the split of ``grad(jit(f))``) show only in programs of several steps.  Here each
program of ``tests/fuzz_programs.py`` (2-8 steps over the fuzzer's op table, ties and exact zeros common) is
traced on its own inputs and then called on other values of the same shapes, so a program that kept the first
call's data, or reused a buffer too early, gives another answer than eager code.  Compared: ``jit`` of every
step's value; for the scalar output ``f``, ``jit(value_and_grad(f))``, ``jit`` of its Hessian-vector product and
of the gradient of its gradient's squared norm, and ``grad(jit(f))``; ``jit`` of the jvp of the last step's
value; and ``vmap`` of two of them over both draws.
Eager is the oracle (the fuzzer holds eager to torch): a value equal to it bitwise under ``AUTODIFF_REFERENCE=1``,
and within jit's promise with every pass on, 1e-12 of the result's scale in float64 and 1e-6 in float32
(docs/jit.md).  A derivative may differ in its last bits in either mode (the program holds a rule's general path
where eager took a fast one: ``test_op_table.py``), so it is held to that promise.
``python -m pytest tests/jit/test_fuzz_jit.py --fuzz-long`` tries 2,500 new programs per dtype.
"""

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import autodiff
import autodiff.numpy as anp
from tests.hypothesis_policy import DERANDOMIZE
from tests.modes import REFERENCE

pytest.importorskip("torch", reason="the fuzzer's op table imports torch; pip install -e '.[test]'")

from tests.fuzz_programs import GRID, programs, run, scalar_output  # noqa: E402  (needs torch)
from tests.rules.test_fuzz import FLOAT32_OPS, LIMITATIONS, OPS  # noqa: E402

OURS = "ours"
EXAMPLES = {False: 80, True: 2500}  # per dtype; True: ``--fuzz-long`` (new programs each run, outside CI)
RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-6}


def _other_inputs(program):
    """Arrays of other values, of the same shapes and dtype and on the same grid of halves (so the guards' domains
    and the ties stay as common): each input shifted by one to three grid steps, wrapped into the grid.  A Python
    float input is static to jit (docs/jit.md, section 1), so it keeps its value and the call runs the program."""
    rng = np.random.default_rng(program.seed + 2)
    out = []
    for x in program.inputs:
        if isinstance(x, float):
            out.append(x)
            continue
        shift = rng.choice([0.5, 1.0, -0.5, -1.5], size=np.shape(x))
        moved = np.array((x + shift + 2.0) % 4.5 - 2.0, dtype=program.dtype)  # back onto GRID's -2.0 .. 2.0
        assert set(moved.ravel().tolist()) <= set(GRID) and moved.shape == np.shape(x)
        out.append(moved)
    return out


def _quantities(program):
    """The functions compared, each of the program's inputs: name -> function returning a list of arrays."""
    vs = program.directions()
    argnums = tuple(range(len(program.inputs)))

    def f(*xs):
        return scalar_output(program, run(program, xs, OURS), OURS)

    def last(*xs):
        return run(program, xs, OURS)[-1]

    def value_and_grad(*xs):
        value, grads = autodiff.value_and_grad(f, argnums=argnums)(*xs)
        return [value, *grads]

    def hvp(*xs):
        return list(autodiff.hvp(f, xs, vs))

    def penalty(*xs):  # reverse over reverse: the gradient of a gradient-norm penalty, as in WGAN-GP
        return list(autodiff.grad(lambda *ys: sum(anp.sum(g * g) for g in grad(*ys)), argnums=argnums)(*xs))

    def jvp(*xs):
        return list(autodiff.jvp(last, xs, vs))

    def steps(*xs):
        return run(program, xs, OURS)

    def grad(*xs):
        return list(autodiff.grad(f, argnums=argnums)(*xs))

    jf = autodiff.jit(f)  # one jit for both calls, so the second runs its program under grad
    return {
        "jit(steps)": (autodiff.jit(steps), steps),
        "jit(value_and_grad)": (autodiff.jit(value_and_grad), value_and_grad),
        "jit(hvp)": (autodiff.jit(hvp), hvp),
        "jit(grad of a gradient penalty)": (autodiff.jit(penalty), penalty),
        "jit(jvp)": (autodiff.jit(jvp), jvp),
        "grad(jit(f))": (lambda *xs: list(autodiff.grad(jf, argnums=argnums)(*xs)), grad),
    }


def _close(what, got, want, dtype, bitwise):
    assert len(got) == len(want), f"{what}: {len(got)} results, eager {len(want)}"
    for k, (a, b) in enumerate(zip(got, want)):
        assert np.result_type(a) == np.result_type(b), f"{what}[{k}]: {np.result_type(a)}, eager {np.result_type(b)}"
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"{what}[{k}]: shape {a.shape}, eager {b.shape}"
        if bitwise:
            np.testing.assert_array_equal(a, b, err_msg=f"{what}[{k}]: not bitwise eager's")
            continue
        finite = np.isfinite(b)
        assert np.array_equal(np.isfinite(a), finite), f"{what}[{k}]: finite elsewhere than eager\njit   {a}\neager {b}"
        np.testing.assert_array_equal(a[~finite], b[~finite], err_msg=f"{what}[{k}]: NaN and Inf as eager's")
        scale = np.abs(b[finite]) + np.max(np.abs(b[finite]), initial=1.0)
        bad = ~(np.abs(a[finite] - b[finite]) <= RTOL[np.dtype(dtype)] * scale)
        assert not bad.any(), f"{what}[{k}]: beyond jit's promise of eager\njit   {a}\neager {b}"


def _eager(fn, xs):
    """``(fn(*xs), None)``, or ``(None, the exception's type)`` when ``fn`` raises: a documented limitation, or
    a method a plain Python float input lacks (``x.sum()`` outside ``grad``, which makes it an array)."""
    try:
        return fn(*xs), None
    except NotImplementedError as e:
        assert any(limit in str(e) for limit in LIMITATIONS), str(e)
        return None, type(e)
    except AttributeError as e:
        assert "'float' object has no attribute" in str(e), str(e)
        return None, type(e)


def _tied(xs):
    """``xs`` with the last array input replaced by the first of its shape and dtype, the same object (a tie,
    design.md section 3: one input of the program), or ``None`` when no two arrays match."""
    seen = {}  # (shape, dtype) -> the first array input of that kind
    for x in xs:
        if isinstance(x, np.ndarray):
            seen.setdefault((x.shape, x.dtype), x)
    pairs = [(k, seen[x.shape, x.dtype]) for k, x in enumerate(xs)
             if isinstance(x, np.ndarray) and seen[x.shape, x.dtype] is not x]
    if not pairs:
        return None
    k, first = pairs[-1]
    return xs[:k] + [first] + xs[k + 1:]


def check(program):
    """Each quantity: traced on the program's inputs, then called on others; both calls equal eager's.  Where two
    inputs match, the same again with them tied (one array passed twice: a signature of its own)."""
    first, second = list(program.inputs), _other_inputs(program)
    draws = [first, second] + ([_tied(first), _tied(second)] if _tied(first) else [])
    for name, (jitted, eager) in _quantities(program).items():
        for k, xs in enumerate(draws):
            want, raised = _eager(eager, xs)
            if raised is not None:  # jit must refuse the same way, not answer
                with pytest.raises(raised):
                    jitted(*xs)
                continue
            bitwise = REFERENCE and name == "jit(steps)"  # a derivative may differ in its last bits (docstring)
            _close(f"{name}, call {k + 1}", jitted(*xs), want, program.dtype, bitwise)


def check_batched(program):
    """``vmap`` of a jitted function (one primitive to vmap, whose batching rule is a program too) over a batch of
    the program's inputs and the other draw, called twice, against eager code on each example."""
    first, second = list(program.inputs), _other_inputs(program)
    in_axes = tuple(None if isinstance(x, float) else 0 for x in first)
    if set(in_axes) == {None}:
        return  # no array to batch
    quantities = _quantities(program)
    for name in ("jit(steps)", "jit(value_and_grad)"):
        jitted, eager = quantities[name]
        try:
            want = [eager(*first), eager(*second)]
        except (NotImplementedError, AttributeError):
            continue  # refused, as ``check`` checks of jit alone
        for k, (a, b) in enumerate(((first, second), (second, first))):
            got = autodiff.vmap(jitted, in_axes=in_axes)(*_stacked(a, b, in_axes))
            expected = [np.stack(pair[::-1] if k else pair) for pair in zip(*want)]
            _close(f"vmap({name}), call {k + 1}", got, expected, program.dtype, bitwise=False)


def _stacked(a, b, in_axes):
    return [x if axis is None else np.stack([x, y]) for x, y, axis in zip(a, b, in_axes)]


def fuzz_against_eager(dtype, examples=EXAMPLES[False], explore=False):
    """``check`` on ``examples`` programs of the fuzzer's ops in ``dtype``: a fixed sequence (derandomized, so a
    red run is reproducible and CI cannot be flaky; new ones under ``AUTODIFF_EXPLORE=1``), or new programs with
    ``explore`` (``--fuzz-long``)."""
    ops = OPS if dtype == np.float64 else FLOAT32_OPS

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=bool(os.environ.get("CI")) if explore else DERANDOMIZE)
    @given(program=programs(dtype, ops))
    def fuzz(program):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a step whose rule reads its data falls back to eager, with a warning
            check(program)
            check_batched(program)

    fuzz()


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_jit_equals_eager_on_random_programs(dtype, request):
    long = request.config.getoption("--fuzz-long")
    fuzz_against_eager(dtype, EXAMPLES[long], explore=long)
