"""What a tape keeps (issue 40): each entry keeps what its pullbacks read, the backward pass frees as it goes,
and protection covers exactly the arrays a live tape keeps.  The peaks are measured in fresh processes
(``bench/memory_chain.py``, tracemalloc), in whichever mode the suite runs (``AUTODIFF_REFERENCE``)."""

import weakref

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff.extend import defvjp, primitive
from bench import memory_chain
from tests.internals import SMALL, Like, Plan, held_count, new_input, open_tape, release

ARRAY = 8_000_000  # the workload's array: 1000 x 1000 float64
BIG = SMALL // 8 + 36  # float64 values: above the size below which the tape's own arrays are kept whole


# ---- the peak of a long chain does not grow with its length ------------------------------------------------

@pytest.mark.parametrize("op", ["add", "multiply"])
def test_a_chain_of_additions_or_scalings_peaks_below_twelve_arrays_whatever_its_length(op):
    short, long = (memory_chain.probe("needless", n, op) for n in (25, 100))
    assert long["peak"] <= 12 * ARRAY, f"{op}: {long['peak'] / 2**20:.1f} MiB"
    assert long["peak"] <= short["peak"] + ARRAY / 4  # no growth with the chain's length
    want = 1.0 if op == "add" else 1.0001 ** 100
    assert long["gradient"] == pytest.approx(want, rel=1e-12)


# ---- what an entry keeps -----------------------------------------------------------------------------------

def _entries(f, *args):
    """The entries ``f`` records on a tape of its own, the tape still open (nothing freed)."""
    with open_tape() as tape:
        inputs = [new_input(tape, a) for a in args]
        f(*inputs)
    entries = [e for e in tape.entries if e[0] is not None]
    release(tape)
    return entries


def test_an_addition_keeps_no_array_only_shapes_and_dtypes():
    x, y = np.ones((BIG, 3)), np.ones(3, np.float32)  # x and the output above SMALL; y a constant, which follows reads
    ((_, _, _, ans, args, _),) = _entries(lambda x: x + y, x)
    assert type(ans) is Like and ans.shape == (BIG, 3) and ans.dtype == np.float64
    assert type(args[0]) is Like and type(args[1]) is Like and args[1].shape == (3,) and args[1].dtype == np.float32


@pytest.mark.parametrize("size, whole", [(SMALL // 8, True), (SMALL // 8 + 1, False)])
def test_an_array_of_the_tapes_own_of_at_most_small_bytes_is_kept_whole(size, whole):
    """A stand-in for so small an array would free less than the entry's own bookkeeping takes; the accelerated
    record's shortcut and the plan agree on the bound (both modes run this)."""
    for f in (lambda x: x + 1.0, lambda x: x * 2.0, lambda x: x + x):  # pullbacks that read no array
        ((_, _, _, ans, args, _),) = _entries(f, np.ones(size))
        arrays = [ans] + [a for a in args if type(a) is not float]
        assert [type(a) is np.ndarray for a in arrays] == [whole] * len(arrays)


def test_a_product_keeps_the_other_factor_only():
    c = np.full(BIG, 2.0)
    ((_, _, _, ans, args, _),) = _entries(lambda x: x * c, np.ones(BIG))
    assert type(ans) is Like and type(args[0]) is Like and args[1] is c
    ((_, _, _, ans, args, _),) = _entries(lambda x: x * 0.5, np.ones(BIG))
    assert type(args[0]) is Like and args[1] == 0.5
    ((_, _, _, ans, args, _),) = _entries(lambda x, y: x * y, np.ones(BIG), c)
    assert type(args[0]) is np.ndarray and type(args[1]) is np.ndarray  # both traced: each reads the other


def test_what_a_pullback_reads_is_read_off_its_code():
    x = np.linspace(0.3, 0.6, BIG)
    tanh_entry, neg_entry = _entries(lambda x: -anp.tanh(x), x)
    assert type(tanh_entry[3]) is np.ndarray and type(tanh_entry[4][0]) is Like  # tanh's pullback reads ans
    assert type(neg_entry[3]) is Like and type(neg_entry[4][0]) is Like  # negative's reads neither
    (sin_entry,) = _entries(anp.sin, x)
    assert type(sin_entry[3]) is Like and sin_entry[4][0] is x  # sin's reads x


def test_a_relu_keeps_its_output_which_the_next_layer_keeps_too():
    """relu's rules read ``relu(x) > 0``, the output: one array per ReLU on the tape, shared with the next matmul's
    input, where reading ``x > 0`` kept the pre-activation as well.  Its derivatives are checked against torch in
    tests/rules (the nn op table); here, against finite differences at both orders."""
    from autodiff.nn import functional as F

    w = np.random.default_rng(0).standard_normal((3, 3))
    x = np.random.default_rng(1).standard_normal((BIG, 3))
    relu_entry, matmul_entry = _entries(lambda x, w: F.relu(x) @ w, x, w)  # w traced: its pullback reads x
    assert type(relu_entry[4][0]) is Like and type(relu_entry[3]) is np.ndarray
    assert matmul_entry[4][0] is relu_entry[3]  # the same array: held once
    assert autodiff.gradcheck(lambda x: anp.sum(anp.tanh(F.relu(x) @ w)), x, order=2)


def test_a_plan_reads_a_declaration_and_refuses_a_name_the_pullback_does_not_take():
    plan = Plan([lambda g, ans, x, y: g, lambda g, ans, x, y: g], ("y", "ans"), 1)
    ans, args = plan.keep((0,), np.ones(BIG), [np.ones(BIG), np.ones(BIG)])
    assert type(ans) is Like and type(args[0]) is Like and type(args[1]) is np.ndarray
    ans, args = plan.keep((0, 1), np.ones(BIG), [np.ones(BIG), np.ones(BIG)])
    assert type(ans) is np.ndarray
    with pytest.raises(ValueError, match=r"reads= names z.*\(ans, x, y\)"):
        Plan([lambda g, ans, x, y: g], ("z",), 1)
    with pytest.raises(ValueError, match="one string per pullback"):
        Plan([lambda g, ans, x, y: g, None], ("y",), 1)


def test_a_pullback_taking_star_args_or_not_python_code_keeps_everything():
    plan = Plan(lambda g, ans, *xs: xs[0], None, 1, joint=True)
    ans, args = plan.keep((0,), np.ones(BIG), [np.ones(BIG), np.ones(3)])
    assert type(args[0]) is np.ndarray and type(args[1]) is np.ndarray and type(ans) is Like
    plan = Plan([np.negative], None, 1)
    ans, args = plan.keep((0,), np.ones(2), [np.ones(2)])
    assert type(ans) is np.ndarray and type(args[0]) is np.ndarray


def test_a_rule_defined_outside_autodiff_keeps_everything_for_its_first_call_check():
    twice = primitive(lambda x: 2.0 * x, "twice_memory")
    defvjp(twice, lambda g, ans, x: 2.0 * g)
    ((_, _, _, ans, args, _),) = _entries(twice, np.ones(2))
    assert type(ans) is np.ndarray and type(args[0]) is np.ndarray
    assert autodiff.gradcheck(lambda x: anp.sum(twice(x) ** 2), np.ones(2), order=2)


def test_a_rule_defined_outside_autodiff_that_declares_what_it_reads_keeps_that():
    scale = primitive(lambda x, c: x * c, "scale_memory")
    defvjp(scale, lambda g, ans, x, c: g * c, None, reads=("c", ""), check=False)  # x (2, 3), c (3,): g * c is x's
    c = np.arange(3.0)
    ((_, _, _, ans, args, _),) = _entries(lambda x: scale(x, c), np.ones((BIG, 3)))
    assert type(ans) is Like and type(args[0]) is Like and args[1] is c
    np.testing.assert_allclose(autodiff.grad(lambda x: anp.sum(scale(x, c)))(np.ones((2, 3))), np.tile(c, (2, 1)))
    assert autodiff.gradcheck(lambda x: anp.sum(scale(x, c) ** 2), np.ones((2, 3)), order=2)


def test_stand_ins_keep_shapes_through_vmap_and_nesting():
    """Broadcasting pullbacks read a stand-in's shape: per example under vmap, through every level."""
    x, y = np.arange(6.0).reshape(2, 3), np.array([0.5, -1.0, 2.0])
    f = lambda x, y: anp.sum((x + y) * (x - y) / (y * y + 1.0))  # noqa: E731
    got = autodiff.vmap(autodiff.grad(f, argnums=1), in_axes=(0, None))(x, y)
    want = np.stack([autodiff.grad(f, argnums=1)(row, y) for row in x])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert autodiff.gradcheck(f, x, y, order=2)
    hess = autodiff.hessian(lambda y: f(x, y))(y)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-10)


# ---- protection and freeing ----------------------------------------------------------------------------

def test_a_constant_no_pullback_reads_is_not_held():
    c = np.ones(3)
    _, pullback = autodiff.vjp(lambda x: anp.sum(x + c), np.ones(3))
    assert held_count(c) == 0 and c.flags.writeable  # x + c reads c for its shape only
    _, pullback2 = autodiff.vjp(lambda x: anp.sum(x * c), np.ones(3))
    assert held_count(c) == 1 and not c.flags.writeable  # x * c reads c
    del pullback, pullback2
    assert c.flags.writeable


def test_the_backward_pass_of_grad_frees_a_residual_once_its_last_reader_has_run():
    """The output of the last tanh is read by its own pullback alone: gone before the first entry's runs."""
    refs, seen = [], []
    probe = primitive(lambda x: x * 1.0, "probe_memory")

    def probe_vjp(g, ans, x):
        seen.append(refs[0]() is None)
        return g

    defvjp(probe, probe_vjp)

    def f(x):
        h = anp.tanh(anp.tanh(probe(x)))
        refs.append(weakref.ref(h.value))
        return anp.sum(h)

    autodiff.grad(f)(np.array([0.1, 0.2]))
    assert seen == [True]
    refs.clear()
    seen.clear()
    _, pullback = autodiff.vjp(f, np.array([0.1, 0.2]))  # a vjp's tape is kept for another call
    pullback(1.0)
    assert seen == [False]
    pullback(1.0)
    assert seen == [False, False]


def test_the_intermediates_of_a_forward_go_when_nothing_reads_them():
    refs = []

    def f(x):
        for _ in range(3):
            x = x + 1.0
            refs.append(weakref.ref(x.value))
        return anp.sum(x * 2.0)

    _, pullback = autodiff.vjp(f, np.ones(BIG))
    assert [r() is None for r in refs] == [True, True, True]  # the last one is read by no pullback either
    np.testing.assert_allclose(pullback(1.0)[0], np.full(BIG, 2.0))
