"""vmap gives each example what a loop over the examples gives it (issue 36): reductions that read a whole
array (``any``, ``all``, ``array_equal``, ``allclose`` and the rest of ``_nondiff``) reduce each example, a
Python branch on their batched result raises, an empty batch works wherever a batch of one does, and the
edges of item 12 (``searchsorted``, a batched mask, ``axis_size``, ``holomorphic_grad``, tuple results used as
one array) against loops and finite differences.  Keyword arguments are mapped along axis 0 (issue 37)."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autodiff
import autodiff.numpy as anp
from autodiff import grad, vmap
from autodiff.extend import BatchingWarning
from tests.hypothesis_policy import DERANDOMIZE
from tests.op_table import OPS

X = np.array([[1.0, 2.0, np.nan], [0.0, 1.0, 1.0], [5.0, 1.0, 3.0], [0.0, 1.0, 1.0 + 1e-9]])
REF = np.array([0.0, 1.0, 1.0])  # equal to X[1], close to X[3]


def _loop(f, *batches):
    """What vmap must give: ``f`` once per example, the results stacked (numpy's own answer on plain arrays)."""
    return np.stack([np.asarray(f(*example)) for example in zip(*batches)])


def _same(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


# --- 1. reductions of a whole example -----------------------------------------------------------------------

WHOLE_EXAMPLE = {  # name: a function of one example reading all of it; numpy's own on plain arrays
    "any": lambda x: anp.any(x > 3), "all": lambda x: anp.all(x > 0.5),
    "np.any": lambda x: np.any(x > 3), "np.all": lambda x: np.all(x >= 0),
    "any keepdims": lambda x: anp.any(x > 3, keepdims=True),
    "all of a matrix": lambda x: anp.all(anp.reshape(x, (3, 1)) * np.ones(2) > 0.5),
    "array_equal": lambda x: anp.array_equal(x, REF), "np.array_equal": lambda x: np.array_equal(REF, x),
    "array_equal equal_nan": lambda x: anp.array_equal(x, X[0], equal_nan=True),
    "array_equal of other shapes": lambda x: anp.array_equal(x, REF[:2]),
    "allclose": lambda x: anp.allclose(x, REF), "np.allclose": lambda x: np.allclose(REF, x),
    "allclose equal_nan": lambda x: anp.allclose(x, X[0], equal_nan=True),
    "allclose atol": lambda x: anp.allclose(x, REF, atol=1.5),
    "isclose": lambda x: anp.isclose(x, REF), "count_nonzero": lambda x: anp.count_nonzero(x > 1),
    "argmax": lambda x: anp.argmax(x), "argmin": lambda x: anp.argmin(x), "argsort": lambda x: anp.argsort(x),
    "shape": lambda x: np.array(anp.shape(x)), "size": lambda x: np.array(np.size(x)),
}


@pytest.mark.parametrize("name", list(WHOLE_EXAMPLE))
def test_a_reduction_of_a_whole_example_reduces_each_example_as_a_loop_does(name):
    f = WHOLE_EXAMPLE[name]
    _same(vmap(f)(X), _loop(f, X))
    _same(vmap(f, in_axes=1)(X.T), _loop(f, X))


def test_the_issues_example_any_over_rows():
    rows = np.array([[1.0, 2.0], [0.0, 1.0], [5.0, 1.0]])
    _same(vmap(lambda x: anp.any(x > 3))(rows), np.array([False, False, True]))


def test_reductions_of_a_whole_example_under_two_vmaps_are_a_double_loop():
    batch = np.stack([X, X[::-1] * 2])
    for f in (lambda x: anp.all(x > 0.5), lambda x: anp.allclose(x, REF), lambda x: anp.array_equal(x, REF)):
        want = np.stack([_loop(f, rows) for rows in batch])
        _same(vmap(vmap(f))(batch), want)
        _same(vmap(vmap(f, in_axes=1), in_axes=1)(np.moveaxis(batch, (0, 1), (1, 2))), want)


def test_a_per_example_reduction_inside_grad_inside_vmap():
    """A mask from a per-example ``all`` chooses per example, as a loop of gradients does."""

    def loss(w, r):
        return anp.sum(anp.where(anp.all(r > 0), w * r, 3.0 * w * r))

    w, R = np.ones(2), np.array([[1.0, 1.0], [-1.0, 1.0], [2.0, 0.5]])
    want = np.stack([grad(loss)(w, r) for r in R])
    np.testing.assert_array_equal(vmap(grad(loss), in_axes=(None, 0))(w, R), want)


@pytest.mark.parametrize("decide", [
    lambda r: anp.all(r > 0), lambda r: np.all(r > 0), lambda r: anp.any(r < 0),
    lambda r: anp.allclose(r, 1.0), lambda r: anp.array_equal(r, np.ones(2)), lambda r: np.allclose(r, 1.0),
], ids=["anp.all", "np.all", "anp.any", "allclose", "array_equal", "np.allclose"])
def test_a_python_branch_on_a_per_example_reduction_raises_pointing_at_where(decide):
    """The issue's example gave [3, 3] for an example whose loop answer is [1, 1]: one branch for the batch."""

    def loss(w, r):
        if decide(r):
            return anp.sum(w * r)
        return 3.0 * anp.sum(w * r)

    R = np.array([[1.0, 1.0], [-1.0, 1.0]])
    with pytest.raises(TypeError, match=r"bool\(\) of a value batched by vmap.*anp\.where"):
        vmap(grad(loss), in_axes=(None, 0))(np.ones(2), R)
    with pytest.raises(TypeError, match=r"bool\(\) of a value batched by vmap"):
        vmap(loss, in_axes=(None, 0))(np.ones(2), R)


def test_a_fast_path_taken_for_the_whole_batch_still_gives_each_example_its_answer():
    """The rules' checks that read every example at once (a zero anywhere in prod, a root at 0) take the
    careful branch for the batch; each example's value and gradient is still a loop's."""
    X0 = np.array([[1.0, 2.0, 3.0], [1.0, 0.0, 2.0], [2.0, 2.0, 2.0]])
    for f in (lambda x: anp.prod(x), lambda x: anp.std(x), lambda x: anp.sum(x ** np.array([0.0, 1.0, 2.0]))):
        np.testing.assert_allclose(vmap(f)(X0), _loop(f, X0), rtol=1e-12)
        np.testing.assert_allclose(vmap(grad(f))(X0), _loop(grad(f), X0), rtol=1e-12)


def test_a_covariance_check_judges_each_example_on_its_own_scale():
    """multivariate_normal's singularity tolerance was scaled by the largest eigenvalue of the whole batch, so a
    small-scale covariance beside a large one was refused under vmap and accepted by a loop."""
    from autodiff.scipy import stats

    C = np.stack([1e-8 * np.eye(2), 1e3 * np.eye(2)])
    f = lambda c: stats.multivariate_normal.logpdf(np.array([1e-4, 0.0]), np.zeros(2), c)  # noqa: E731
    import scipy.stats

    np.testing.assert_allclose(vmap(f)(C), [scipy.stats.multivariate_normal.logpdf([1e-4, 0.0], None, c) for c in C],
                               rtol=1e-12)
    with pytest.raises(ValueError, match=r"the covariance matrix is singular .* range over \[0, 2\]"):
        vmap(f)(np.stack([np.eye(2), np.ones((2, 2))]))


# --- 2. an empty batch --------------------------------------------------------------------------------------

TABLE_SETTINGS = settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck),
                          derandomize=DERANDOMIZE)


def _mixes(n):
    """All arguments batched, only the first, and (with two or more) all but the first."""
    mixes = [(True,) * n, (True,) + (False,) * (n - 1)] + ([(False,) + (True,) * (n - 1)] if n > 1 else [])
    return list(dict.fromkeys(mixes))


def _parts(out):
    return out if type(out) is tuple else (out,)


TABLE = [op for op in OPS if op.name != "special.logsumexp"]


def test_scipy_logsumexp_over_an_empty_batch():
    """Out of the table, whose draws reach this case only with axis=None; its other cases pass."""
    from autodiff.scipy import special

    assert vmap(special.logsumexp)(np.empty((0, 3, 4))).shape == (0,)


@pytest.mark.parametrize("op", TABLE, ids=repr)
def test_an_empty_batch_gives_what_a_loop_would_stack_for_every_op_of_the_table(op):
    """0 examples: every output shaped (0,) + one example's output shape, in one example's dtype (what
    ``np.stack`` of zero results of that shape gives), for every mix of batched and shared arguments."""

    @settings(TABLE_SETTINGS, max_examples=min(op.examples, 2))
    @given(case=op.cases, seed=st.integers(0, 2**16))
    def run(case, seed):
        shapes, kwargs = case
        rng = np.random.default_rng(seed)
        one = [op.domain(rng.standard_normal(s)) for s in shapes]
        f = lambda *xs: op.fn(*xs, **kwargs)  # noqa: E731
        want = _parts(f(*one))
        for mix in _mixes(len(one)):
            args = [np.empty((0,) + np.shape(a), np.result_type(a)) if b else a for a, b in zip(one, mix)]
            got = _parts(vmap(f, in_axes=tuple(0 if b else None for b in mix))(*args))
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert np.shape(g) == (0,) + np.shape(w) and np.result_type(g) == np.result_type(w), (mix, g, w)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BatchingWarning)
        run()


FLATTENING = {  # the ops that flatten an example, which crashed on 0 examples ("cannot reshape array of size 0")
    "reshape(-1)": lambda x: anp.reshape(x, -1), "reshape((-1, 2))": lambda x: anp.reshape(x, (-1, 2)),
    "ravel": anp.ravel, "x.ravel()": lambda x: x.ravel(), "x.flatten()": lambda x: x.flatten(),
    "sort(axis=None)": lambda x: anp.sort(x, axis=None), "argmax": anp.argmax, "argmin": anp.argmin,
    "argsort(axis=None)": lambda x: anp.argsort(x, axis=None), "cumsum": anp.cumsum, "cumprod": anp.cumprod,
    "take": lambda x: anp.take(x, [0, 5]), "repeat": lambda x: anp.repeat(x, 2), "roll": lambda x: anp.roll(x, 1),
    "outer": lambda x: anp.outer(x, x), "array": lambda x: anp.array([x[0, 0], x[1, 1]]),
    "grad of a ravel": grad(lambda x: anp.sum(anp.ravel(x) ** 3)),
    "jvp of a ravel": lambda x: autodiff.jvp(anp.ravel, (x,), (x,))[1],
    "jacobian": autodiff.jacobian(lambda x: anp.tanh(anp.ravel(x))),
    "hessian": autodiff.hessian(lambda x: anp.sum(anp.ravel(x) ** 3)),
    "an inner vmap": lambda x: vmap(anp.argmax)(x),
}


@pytest.mark.parametrize("name", list(FLATTENING))
def test_an_empty_batch_of_ops_that_flatten_an_example(name):
    f, x = FLATTENING[name], np.random.default_rng(0).standard_normal((1, 3, 4))
    one = vmap(f)(x)
    empty = vmap(f)(x[:0])
    assert empty.shape == (0,) + one.shape[1:] and empty.dtype == one.dtype
    _same(one, _loop(f, x))


def _convnet():
    import layers
    from autodiff.nn import functional as F

    rng = np.random.default_rng(0)
    conv = layers.Conv2d(rng.standard_normal((4, 2, 3, 3)) * 0.4, rng.standard_normal(4), 1, 1)
    norm = layers.BatchNorm(rng.standard_normal(4), rng.standard_normal(4), np.zeros(4), np.ones(4))
    model = {"conv": conv, "norm": norm, "pool": layers.MaxPool2d(3, 2, 1),
             "head": layers.Dense(rng.standard_normal((3, 36)) * 0.3, rng.standard_normal(3))}

    def loss(m, x):
        y, _ = m["norm"].forward(m["conv"](x[None]), train=True)
        return anp.sum(m["head"](anp.ravel(m["pool"](F.relu(y)))) ** 2)

    return model, loss


def test_per_example_gradients_of_a_convnet_over_an_empty_batch():
    """im2col's rows are not its images: the empty batch's rows were once read as one example's image count."""
    model, loss = _convnet()
    X = np.random.default_rng(1).standard_normal((2, 2, 6, 6))
    for batch in (X, X[:0]):
        per_example = vmap(grad(loss), in_axes=(None, 0))(model, batch)
        assert per_example["conv"].weight.shape == (len(batch), 4, 2, 3, 3)
        assert per_example["head"].weight.shape == (len(batch), 3, 36)
        if len(batch):
            np.testing.assert_allclose(per_example["conv"].weight, _loop(lambda x: grad(loss)(model, x)["conv"].weight,
                                                                         batch), rtol=1e-10)
        total = grad(lambda m, b: anp.sum(vmap(loss, in_axes=(None, 0))(m, b)))(model, batch)
        want = np.sum(per_example["conv"].weight, axis=0)
        np.testing.assert_allclose(total["conv"].weight, want, rtol=1e-10, atol=1e-12)


# --- 2. the other edges: searchsorted, a batched mask, axis_size, holomorphic_grad ------------------------------

SORTED = np.sort(np.random.default_rng(2).standard_normal((4, 6)), axis=1)
VALUES = np.random.default_rng(3).standard_normal((4, 2, 3))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_is_batched_as_a_loop(side):
    """It was refused as ragged ("a different size per example"), which its result is not: v's shape."""
    for f, batches in [
        (lambda v: anp.searchsorted(SORTED[0], v, side=side), (VALUES,)),  # one sorted array, every example's v
        (lambda a, v: anp.searchsorted(a, v, side=side), (SORTED, VALUES)),  # a sorted array per example
        (lambda a: np.searchsorted(a, 0.25, side=side), (SORTED,)),  # numpy's, routed
        (lambda a: anp.searchsorted(a, np.array([SORTED[0, 3], 0.0]), side=side), (SORTED,)),  # ties: the side
    ]:
        _same(vmap(f)(*batches), _loop(f, *batches))
        _same(vmap(f)(*[b[:0] for b in batches]), _loop(f, *batches)[:0])
    order = np.argsort(VALUES[:, 0], axis=1)  # sorter: each example's own order
    f = lambda a, s: anp.searchsorted(a, 0.1, side=side, sorter=s)  # noqa: E731
    _same(vmap(f)(VALUES[:, 0], order), _loop(f, VALUES[:, 0], order))


def test_searchsorted_under_two_vmaps_is_a_double_loop():
    a2, v2 = np.stack([SORTED, SORTED[::-1] - 1]), np.stack([VALUES, 2 * VALUES])
    f = anp.searchsorted
    _same(vmap(vmap(f))(a2, v2), np.stack([_loop(f, a, v) for a, v in zip(a2, v2)]))
    want = np.stack([[np.searchsorted(a, v) for v in VALUES] for a in SORTED])
    _same(vmap(lambda a: vmap(lambda v: anp.searchsorted(a, v))(VALUES))(SORTED), want)


def test_a_batched_boolean_mask_keeping_different_counts_is_refused_by_name():
    """numpy's "all input arrays must have the same shape" came from the loop's stack; a mask keeping as many
    entries in every example batches as the loop does."""
    ragged = np.array([[1.0, -2.0, 3.0], [-1.0, -2.0, 3.0]])
    for f in (lambda x: x[x > 0], lambda x: anp.sum(x[x > 0]), grad(lambda x: anp.sum(x[x > 0] ** 2))):
        with pytest.raises(ValueError, match=r"vmap: getitem gives results of different shapes .*\(2,\) for "
                                             r"example 0, \(1,\) for example 1.*boolean mask.*anp\.where"):
            vmap(f)(ragged)
    even = np.array([[1.0, -2.0, 3.0], [-1.0, 2.0, 3.0]])
    _same(vmap(lambda x: x[x > 0])(even), _loop(lambda x: x[x > 0], even))


@pytest.mark.parametrize("size, error, message", [
    (-1, ValueError, r"vmap: axis_size must be the number of examples, 0 or more, got -1"),
    (2.5, TypeError, r"vmap: axis_size must be an int .*got 2\.5 of type float"),
    (True, TypeError, r"vmap: axis_size must be an int .*got True of type bool"),
    ("3", TypeError, r"vmap: axis_size must be an int .*got '3' of type str"),
])
def test_axis_size_is_a_number_of_examples(size, error, message):
    """-1 gave numpy's "negative dimensions", 2.5 was truncated to 2 and True taken for 1."""
    with pytest.raises(error, match=message):
        vmap(lambda x: x, in_axes=None, axis_size=size)


def test_axis_size_zero_and_numpy_ints_are_numbers_of_examples():
    _same(vmap(lambda x: x * 2.0, in_axes=None, axis_size=np.int64(3))(1.5), np.full(3, 3.0))
    _same(vmap(lambda x: x * 2.0, in_axes=None, axis_size=0)(np.ones(2)), np.empty((0, 2)))


def test_holomorphic_grad_under_vmap_is_a_loop():
    """The batch leaked into its scalar check: a batch of scalar outputs was refused as a vector output."""
    Z = np.array([1.0 + 2.0j, 0.5 - 1.0j, -0.3j])
    f = lambda z: anp.sin(z) * z ** 2  # noqa: E731
    for h in (autodiff.holomorphic_grad(f), autodiff.holomorphic_grad(autodiff.holomorphic_grad(f))):
        np.testing.assert_allclose(vmap(h)(Z), _loop(h, Z), rtol=1e-13)
    np.testing.assert_allclose(vmap(autodiff.holomorphic_grad(f))(Z), np.cos(Z) * Z ** 2 + 2 * Z * np.sin(Z),
                               rtol=1e-13)  # f'(z) in closed form, the oracle of the loop itself
    W = np.array([[1.0 + 1.0j, 2.0], [0.5j, -1.0]])
    g = autodiff.holomorphic_grad(lambda w, z: anp.sum(anp.exp(w * z)))
    np.testing.assert_allclose(vmap(g, in_axes=(0, None))(W, Z[0]), _loop(lambda w: g(w, Z[0]), W), rtol=1e-13)
    with pytest.raises(TypeError, match=r"holomorphic_grad: the function must return a complex scalar, but it "
                                        r"returned a value of shape \(2,\)"):
        vmap(autodiff.holomorphic_grad(anp.exp))(W)  # one example's output is a vector: still refused


# --- 2. tuple results (slogdet, eigh, svd) used as one array -----------------------------------------------------

MATRICES = np.array([[[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 3.0]],
                     [[1.0, 0.5, 0.0], [0.5, 2.0, 0.4], [0.0, 0.4, 0.7]],
                     [[4.0, -1.0, 0.2], [-1.0, 1.2, 0.3], [0.2, 0.3, 2.5]]])
AS_ONE_ARRAY = {  # numpy reads a tuple result as the array of its parts
    "anp.sum(slogdet)": lambda a: anp.sum(anp.linalg.slogdet(a)),
    "np.sum(np.linalg.slogdet)": lambda a: np.sum(np.linalg.slogdet(a)),
    "slogdet times weights": lambda a: anp.sum(anp.linalg.slogdet(a) * np.array([0.5, 2.0])),
    "anp.array(slogdet)": lambda a: anp.array(anp.linalg.slogdet(a)) * 2.0,
    "mean of svd values": lambda a: anp.mean(anp.linalg.svd(a, compute_uv=False)),
}


@pytest.mark.parametrize("name", list(AS_ONE_ARRAY))
def test_a_tuple_result_used_as_one_array_under_vmap_is_a_loop(name):
    """vmap summed the signs of all examples and the log-determinants of all examples (the parts' axis came
    before the batch's): a silently wrong number for every example."""
    f = AS_ONE_ARRAY[name]
    np.testing.assert_allclose(vmap(f)(MATRICES), _loop(f, MATRICES), rtol=1e-13)
    np.testing.assert_allclose(vmap(vmap(f))(np.stack([MATRICES, 2 * MATRICES])),
                               np.stack([_loop(f, MATRICES), _loop(f, 2 * MATRICES)]), rtol=1e-13)


@pytest.mark.parametrize("name", list(AS_ONE_ARRAY))
def test_a_tuple_result_used_as_one_array_under_jvp_against_finite_differences(name):
    """jvp raised "unsupported operand type(s) for +: 'ZeroTangent' and 'float'" (a real sign's tangent)."""
    f, a, t = AS_ONE_ARRAY[name], MATRICES[0], MATRICES[1] - MATRICES[1].T + np.eye(3)
    out, tangent = autodiff.jvp(f, (a,), (t,))
    h = 1e-6
    np.testing.assert_allclose(out, f(a), rtol=1e-14)
    np.testing.assert_allclose(tangent, (f(a + h * t) - f(a - h * t)) / (2 * h), rtol=1e-7, atol=1e-9)
    vjp_out, pullback = autodiff.vjp(f, a)
    np.testing.assert_allclose(np.sum(pullback(np.ones_like(vjp_out))[0] * t), np.sum(tangent), rtol=1e-12)


def test_a_tuple_result_used_as_one_array_in_every_nesting_of_vmap_jvp_and_grad():
    f = AS_ONE_ARRAY["slogdet times weights"]
    T = np.stack([np.eye(3), MATRICES[1], MATRICES[2].T])
    looped = _loop(lambda a, t: autodiff.jvp(f, (a,), (t,))[1], MATRICES, T)
    np.testing.assert_allclose(vmap(lambda a, t: autodiff.jvp(f, (a,), (t,))[1])(MATRICES, T), looped, rtol=1e-12)
    np.testing.assert_allclose(autodiff.jvp(lambda a: vmap(f)(a), (MATRICES,), (T,))[1], looped, rtol=1e-12)
    np.testing.assert_allclose(vmap(grad(f))(MATRICES), _loop(grad(f), MATRICES), rtol=1e-12)
    autodiff.gradcheck(f, MATRICES[0], order=2)
    autodiff.gradcheck(lambda a: anp.sum(vmap(f)(a) ** 2), MATRICES, order=2)


def test_the_shape_of_a_tuple_result_under_vmap_is_one_examples():
    """anp.shape(slogdet(a)) under vmap reported the batch size: the parts' shape with the batch dropped."""
    seen = []
    vmap(lambda a: seen.append((anp.shape(anp.linalg.slogdet(a)), np.ndim(anp.linalg.slogdet(a)),
                                anp.size(anp.linalg.slogdet(a)))) or a)(np.stack([MATRICES[0]] * 5))
    assert seen == [(np.shape(np.linalg.slogdet(MATRICES[0])), 1, 2)]
    seen.clear()
    vmap(lambda a: seen.append(anp.shape(anp.linalg.slogdet(a))) or a)(np.stack([MATRICES[:2]] * 5))
    assert seen == [np.shape(np.linalg.slogdet(MATRICES[:2]))]


@pytest.mark.parametrize("transform", ["vmap", "jvp"])
def test_an_eigh_or_svd_result_used_as_one_array_is_refused_naming_the_fix(transform):
    """Their parts differ in shape, so numpy makes no array of them either; under vmap and jvp the error was
    numpy's or a ZeroTangent's, now it names the op reading it and the fix."""
    for f in (lambda a: anp.sum(anp.linalg.eigh(a)), lambda a: anp.sum(anp.linalg.svd(a))):
        with pytest.raises(ValueError, match=r"sum got the result of a primitive with several outputs .*different "
                                             r"shapes \((\(3, 3\), )?\(3,\), \(3, 3\)\).*use the parts themselves"):
            if transform == "vmap":
                vmap(f)(MATRICES)
            else:
                autodiff.jvp(f, (MATRICES[0],), (np.eye(3),))
    with pytest.raises(ValueError, match=r"has no shape as one array: its parts have different shapes"):
        vmap(lambda a: anp.shape(anp.linalg.eigh(a)) and a)(MATRICES)


# --- 3. messages that named the wrong thing ---------------------------------------------------------------------

@pytest.mark.parametrize("call, message", [
    (lambda: vmap(lambda x: x, in_axes=(0, 0))(np.ones(2)), r"e\.g\. in_axes=\(0,\)$"),  # (0) is no tuple
    (lambda: vmap(lambda x: {"a": x}, out_axes={"b": 0})(np.ones(2)),
     r"out_axes does not mirror the output: nothing in it covers the leaf at output\['a'\]"),  # was "arg a"
    (lambda: vmap(lambda x: x, out_axes={"b": 0})(np.ones(2)), r"covers the leaf at output;"),  # was "the argument"
    (lambda: vmap(lambda x: x, out_axes=({"a": "x"},)), r"out_axes must be .* has 'x' at output\[0\]\['a'\]"),
    (lambda: vmap(lambda x: x, out_axes=3)(np.ones(2)), r"out_axes puts the batch axis of output at axis 3, but with "
                                                        r"the batch it has 1 axes"),
])
def test_vmap_messages_name_outputs_as_outputs_and_give_real_tuples(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


# --- 4. keyword arguments (issue 37) ----------------------------------------------------------------------------

def _layer(x, w=None, b=0.0):
    return anp.tanh(anp.dot(w, x) + b)


def test_keyword_arguments_are_mapped_along_axis_0_as_in_jax():
    """JAX maps every keyword argument along axis 0 (in_axes names positional ones only); we refused them."""
    rng = np.random.default_rng(4)
    X, W, B = rng.standard_normal((3, 2)), rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(vmap(_layer)(X, w=W, b=B),
                               _loop(lambda x, w, b: _layer(x, w=w, b=b), X, W, B), rtol=1e-14)
    np.testing.assert_allclose(vmap(_layer, in_axes=None)(X[0], w=W, b=B),  # in_axes None: positional only
                               _loop(lambda w, b: _layer(X[0], w=w, b=b), W, B), rtol=1e-14)
    np.testing.assert_allclose(vmap(_layer, in_axes=1)(X.T, w=W, b=B),
                               _loop(lambda x, w, b: _layer(x, w=w, b=b), X, W, B), rtol=1e-14)
    got = vmap(grad(lambda x, p=None: anp.sum(_layer(x, **p) ** 2)), in_axes=None)(X[0], p={"w": W, "b": B})
    want = _loop(lambda w, b: grad(lambda x: anp.sum(_layer(x, w=w, b=b) ** 2))(X[0]), W, B)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    per_example = vmap(grad(lambda w, x=None: anp.sum(_layer(x, w=w) ** 2)), in_axes=None)(W[0], x=X)
    autodiff.gradcheck(lambda w: anp.sum(vmap(lambda x: anp.sum(_layer(x, w=w) ** 2))(X)), W[0])
    np.testing.assert_allclose(per_example, _loop(lambda x: grad(lambda w: anp.sum(_layer(x, w=w) ** 2))(W[0]), X),
                               rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: vmap(_layer)(np.ones((3, 2)), w=np.ones((3, 4, 2)), b=1.0),
     r"keyword arguments are mapped along axis 0 \(in_axes names positional ones only\), which gives the scalar "
     r"at keyword argument b the batch axis 0, but it has no axes; pass it positionally with in_axes None, or "
     r"close over it"),
    (lambda: vmap(_layer)(np.ones((3, 2)), w=np.ones((2, 4, 2))),
     r"batch sizes differ: the leaf at arg 0 has 3 .* the leaf at keyword argument w has 2"),
    (lambda: vmap(_layer, in_axes=None)(np.ones(2), w=np.ones((3, 4, 2)), b={"c": 2.0}),
     r"the scalar at keyword argument b\['c'\]"),
])
def test_a_keyword_argument_that_cannot_be_mapped_is_refused_naming_it(call, message):
    with pytest.raises(ValueError, match=message):
        call()
