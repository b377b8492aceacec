"""numpy's everyday namespace in ``autodiff.numpy`` (issue 37).

A program that writes ``import autodiff.numpy as np`` finds every public name of numpy there, except those in
``ABSENT``, each with the reason it is left out.  What is there is one of: an op with rules (checked here for
the new ones against numpy's values, finite differences at orders 1 and 2, forward against reverse mode and
vmap against a loop), a plain-valued helper that strips tracing only where the derivative is zero or the
result is an integer or boolean (checked against numpy, under ``grad`` and under ``vmap``), or numpy's own
object (constants, dtypes, constructors of shapes, queries: ``_namespace.AS_IS``, and nothing else raw).
"""

import warnings

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from tests.derivative_checks import check_derivatives, check_vmap
from tests.internals import AS_IS, PLAIN

_IN_PLACE = "changes an array in place, which a traced value cannot be; build a new array instead"
_IO = "reads or writes files or buffers of plain data; load with numpy, then differentiate"
_PRINTING = "printing and numpy's own settings; call numpy's (they print traced values' .value as numpy does)"
_MEMORY = "memory layout of plain arrays; a traced value's storage is the engine's"
_SET_OPERATION = ("a set operation: the output's size depends on the values, and the values keep a derivative "
                  "we have no rule for yet; compute it on plain values (autodiff.stop_gradient)")
_PYTHON_LOOP = "calls a Python function per element or slice through object arrays; use autodiff.vmap"
_MATRIX = "np.matrix and record arrays are ndarray subclasses with their own semantics; use plain arrays"
_NO_RULE = "no derivative rule yet"

ABSENT = {
    "__array_namespace_info__": "the array API's description of numpy's own namespace, not of ours",
    "__version__": "numpy's version; read numpy.__version__",
    "copyto": _IN_PLACE, "fill_diagonal": _IN_PLACE, "place": _IN_PLACE, "put": _IN_PLACE,
    "put_along_axis": _IN_PLACE + " (anp.add_at for a scatter-add)", "putmask": _IN_PLACE,
    "insert": _NO_RULE + "; anp.concatenate of the slices and the new values",
    "frombuffer": _IO, "fromfile": _IO, "fromregex": _IO, "fromstring": _IO, "genfromtxt": _IO, "load": _IO,
    "loadtxt": _IO, "save": _IO, "savetxt": _IO, "savez": _IO, "savez_compressed": _IO, "memmap": _IO,
    "from_dlpack": _IO + " (another library's tensor)",
    "array2string": _PRINTING, "array_repr": _PRINTING, "array_str": _PRINTING,
    "format_float_positional": _PRINTING, "format_float_scientific": _PRINTING, "get_printoptions": _PRINTING,
    "set_printoptions": _PRINTING, "printoptions": _PRINTING, "getbufsize": _PRINTING, "setbufsize": _PRINTING,
    "info": _PRINTING, "show_config": _PRINTING, "show_runtime": _PRINTING,
    "get_include": "the C headers' directory, for building extensions against numpy",
    "test": "runs numpy's own test suite",
    "isfortran": _MEMORY, "may_share_memory": _MEMORY, "shares_memory": _MEMORY,
    "require": _MEMORY + " (anp.asarray(a, dtype) for the dtype)",
    "flatiter": _MEMORY, "nditer": _MEMORY, "nested_iters": _MEMORY, "ndenumerate": _MEMORY,
    "unique": _SET_OPERATION, "unique_all": _SET_OPERATION, "unique_counts": _SET_OPERATION,
    "unique_inverse": _SET_OPERATION, "unique_values": _SET_OPERATION, "intersect1d": _SET_OPERATION,
    "union1d": _SET_OPERATION, "setdiff1d": _SET_OPERATION, "setxor1d": _SET_OPERATION,
    "histogram": "counts are steps in the data, but automatic bin edges move with its range: " + _NO_RULE
                 + " (a weighted anp.bincount, or anp.add_at, for a histogram of weights)",
    "histogram2d": _NO_RULE + " (see histogram)", "histogramdd": _NO_RULE + " (see histogram)",
    "histogram_bin_edges": _NO_RULE + " (see histogram)",
    "apply_along_axis": _PYTHON_LOOP, "apply_over_axes": _PYTHON_LOOP, "vectorize": _PYTHON_LOOP,
    "frompyfunc": _PYTHON_LOOP, "piecewise": _PYTHON_LOOP + " (anp.select or anp.where for the pieces)",
    "matrix": _MATRIX, "asmatrix": _MATRIX, "bmat": _MATRIX, "recarray": _MATRIX, "record": _MATRIX,
    "poly1d": "a polynomial class with its own arithmetic; use coefficient arrays with anp.polyval and friends",
    "poly": _NO_RULE + " (a product of (x - root) factors: anp.polymul)",
    "roots": _NO_RULE + " (the eigenvalues of the companion matrix: anp.linalg.eig)",
    "polyfit": _NO_RULE + " (a least-squares solve: anp.linalg.pinv(anp.vander(x, deg + 1)) @ y)",
    "polydiv": _NO_RULE,
    "nanmedian": _NO_RULE + " (anp.median of the values that are numbers)", "nanpercentile": _NO_RULE,
    "nanquantile": _NO_RULE,
    "nextafter": _NO_RULE + ": it moves x1 by one ulp, so its derivative in x1 is 1, not the 0 a plain helper "
                 "would give",
    "i0": "autodiff.scipy.special.i0 (scipy's own home for it, with its rules)",
    "row_stack": "deprecated by numpy 2.0; anp.vstack",
    "char": "string arrays", "strings": "string arrays", "rec": _MATRIX, "ma": "masked arrays: anp.where",
    "ctypeslib": "C interop", "f2py": "Fortran interop", "lib": "numpy's internals; the public names are here",
    "core": "numpy's internals; the public names are here", "emath": _NO_RULE + " (complex-valued sqrt, log...)",
    "polynomial": _NO_RULE + " (numpy's polynomial classes; coefficient arrays work with anp.polyval...)",
}

PENDING = {}  # names another change is building (empty: autodiff.numpy.fft has landed)


def _numpy_names():
    return sorted(set(np.__all__) | {n for n in dir(np) if not n.startswith("_")})


def test_every_numpy_name_is_here_or_listed_absent_with_its_reason():
    missing = [n for n in _numpy_names() if not hasattr(anp, n) and n not in ABSENT and n not in PENDING]
    assert missing == []


def test_the_absent_table_stays_honest():
    assert [n for n in ABSENT if hasattr(anp, n)] == []  # a name that arrived leaves the table
    assert [n for n in ABSENT if n not in _numpy_names()] == []
    assert all(reason.strip() for reason in ABSENT.values())


def test_the_names_issue_37_found_missing():
    """``newaxis``, ``pi``, ... were missing, so numpy code written against ``anp`` failed with AttributeError."""
    for name in ["newaxis", "pi", "e", "inf", "nan", "float32", "float64", "zeros", "ones", "empty", "arange",
                 "eye", "linspace", "iscomplex"]:
        assert hasattr(anp, name), name
    x = anp.zeros((2, 1), anp.float32)[:, anp.newaxis]
    assert x.shape == (2, 1, 1) and x.dtype == np.float32 and anp.isnan(anp.nan) and anp.inf > 1e308
    np.testing.assert_array_equal(anp.iscomplex(np.array([1.0 + 1j, 2.0])), [True, False])
    assert autodiff.grad(lambda t: anp.sum(anp.iscomplex(t) * 1.0) + anp.sum(t))(np.ones(2)).tolist() == [1.0, 1.0]


def test_numpys_own_objects_are_exactly_the_as_is_table():
    """Nothing of numpy is re-exported raw except constants, dtypes, constructors and queries (``AS_IS``): a raw
    function reading values could strip a traced value of its derivative."""
    raw = {n for n in anp.__all__ if getattr(anp, n) is getattr(np, n, object())}
    assert raw == set(AS_IS)
    assert all(getattr(anp, n) is getattr(np, n) for n in AS_IS)


def test_random_and_constructors_are_numpys():
    assert anp.random is np.random and anp.arange is np.arange and anp.float64 is np.float64
    assert anp.ones(3, dtype=anp.int8).dtype == np.int8


RNG = np.random.default_rng(11)
V = np.array([0.3, -0.7, 1.2, 0.5])
W = np.array([1.1, 0.4, -0.9, 2.0])
M = RNG.standard_normal((3, 4))
VNAN = np.array([0.3, np.nan, 1.2, -0.5])
MNAN = np.array([[0.3, np.nan, 1.2], [np.nan, 2.0, -1.0]])

# name: (function of a library and the arguments, arguments, positions differentiated; "novmap": why not)
OPS = {
    "acos": (lambda lib, x: lib.acos(x / 2), (V,), (0,)), "asin": (lambda lib, x: lib.asin(x / 2), (V,), (0,)),
    "atan": (lambda lib, x: lib.atan(x), (V,), (0,)), "acosh": (lambda lib, x: lib.acosh(x + 2), (V,), (0,)),
    "asinh": (lambda lib, x: lib.asinh(x), (V,), (0,)), "atanh": (lambda lib, x: lib.atanh(x / 2), (V,), (0,)),
    "atan2": (lambda lib, x, y: lib.atan2(x, y), (V, W), (0, 1)),
    "pow": (lambda lib, x, y: lib.pow(x + 2, y), (V, W), (0, 1)),
    "permute_dims": (lambda lib, m: lib.permute_dims(m.reshape(3, 2, 2), (2, 0, 1)), (M,), (0,)),
    "matrix_transpose": (lambda lib, m: lib.matrix_transpose(m.reshape(2, 3, 2)), (M,), (0,)),
    "vecdot": (lambda lib, m, v: lib.vecdot(m, v), (M, V), (0, 1)),
    "matvec": (lambda lib, m, v: lib.matvec(m, v), (M, V), (0, 1)),
    "vecmat": (lambda lib, v, m: lib.vecmat(v[:3], m), (V, M), (0, 1)),
    "cumulative_sum": (lambda lib, x: lib.cumulative_sum(x, include_initial=True), (V,), (0,)),
    "cumulative_prod": (lambda lib, m: lib.cumulative_prod(m, axis=1), (M,), (0,)),
    "concat": (lambda lib, x, y: lib.concat([x, y]), (V, W), (0, 1)),
    "unstack": (lambda lib, m: lib.stack(lib.unstack(m, axis=1)[::-1]), (M,), (0,)),
    "positive": (lambda lib, x: lib.positive(x), (V,), (0,)),
    "copysign": (lambda lib, x, y: lib.copysign(x, y), (V, W), (0, 1)),
    "heaviside": (lambda lib, y: lib.heaviside(np.array([-1.0, 0.0, 2.0, 0.0]), y), (W,), (0,)),
    "fmod": (lambda lib, x, y: lib.fmod(x * 5, y), (V, W), (0, 1)),
    "divmod": (lambda lib, x, y: lib.divmod(x * 5, y)[1], (V, W), (0, 1)),
    "modf": (lambda lib, x: lib.modf(x * 3)[0], (V,), (0,)),
    "ldexp": (lambda lib, x: lib.ldexp(x, np.array([1, -2, 3, 0])), (V,), (0,)),
    "frexp": (lambda lib, x: lib.frexp(x * 5)[0], (V,), (0,)),
    "float_power": (lambda lib, x, y: lib.float_power(x + 2, y), (V, W), (0, 1)),
    "nansum": (lambda lib, m: lib.nansum(m, axis=1), (MNAN,), (0,)),
    "nanprod": (lambda lib, x: lib.nanprod(x), (VNAN,), (0,)),
    "nanmean": (lambda lib, m: lib.nanmean(m, axis=0), (MNAN,), (0,)),
    "nanvar": (lambda lib, x: lib.nanvar(x, ddof=1), (VNAN,), (0,)),
    "nanstd": (lambda lib, m: lib.nanstd(m, axis=1, keepdims=True), (MNAN,), (0,)),
    "nanmax": (lambda lib, m: lib.nanmax(m, axis=1), (MNAN,), (0,)),
    "nanmin": (lambda lib, x: lib.nanmin(x), (VNAN,), (0,)),
    "nancumsum": (lambda lib, m: lib.nancumsum(m, axis=1), (MNAN,), (0,)),
    "nancumprod": (lambda lib, x: lib.nancumprod(x), (VNAN,), (0,)),
    "ptp": (lambda lib, m: lib.ptp(m, axis=1), (M,), (0,)),
    "average": (lambda lib, m, w: lib.average(m, axis=1, weights=w + 3), (M, W), (0, 1)),
    "average returned": (lambda lib, m: lib.average(m, axis=0, returned=True)[0], (M,), (0,)),
    "quantile": (lambda lib, x: lib.quantile(x, [0.2, 0.9]), (V,), (0,)),
    "percentile": (lambda lib, m: lib.percentile(m, 30, axis=0, keepdims=True), (M,), (0,)),
    "median": (lambda lib, m: lib.median(m, axis=1), (M,), (0,)),
    "median even": (lambda lib, x: lib.median(x), (V,), (0,)),
    "cov": (lambda lib, m: lib.cov(m), (M,), (0,)),
    "cov y": (lambda lib, x, y: lib.cov(x, y, rowvar=False, ddof=0), (V, W), (0, 1)),
    "corrcoef": (lambda lib, m: lib.corrcoef(m), (M,), (0,)),
    "take_along_axis": (lambda lib, m: lib.take_along_axis(m, np.array([[1, 1], [0, 3], [2, 2]]), axis=1),
                        (M,), (0,)),
    "delete": (lambda lib, m: lib.delete(m, [0, 2], axis=1), (M,), (0,)),
    "compress": (lambda lib, m: lib.compress([True, False, True], m, axis=0), (M,), (0,)),
    "extract": (lambda lib, m: lib.extract(M > 0, m), (M,), (0,)),
    "resize": (lambda lib, x: lib.resize(x, (3, 3)), (V,), (0,)),
    "trim_zeros": (lambda lib, x: lib.trim_zeros(x * np.array([0.0, 1.0, 1.0, 0.0])), (V,), (0,),
                   "the kept range depends on each example's values"),
    "diagflat": (lambda lib, x: lib.diagflat(x, 1), (V,), (0,)),
    "choose": (lambda lib, x, y: lib.choose(np.array([1, 0, 0, 1]), [x, y]), (V, W), (0, 1)),
    "sort_complex": (lambda lib, x: lib.sort_complex(x), (V,), (0,)),
    "broadcast_arrays": (lambda lib, x, m: lib.stack(lib.broadcast_arrays(x, m)), (V, M), (0, 1)),
    "meshgrid": (lambda lib, x, y: lib.stack(lib.meshgrid(x, y[:3])), (V, W), (0, 1)),
    "meshgrid ij": (lambda lib, x, y: lib.stack(lib.meshgrid(x, y, indexing="ij")), (V, W), (0, 1)),
    "logspace": (lambda lib, a, b: lib.logspace(a[0], b[0], 4), (V, W), (0, 1)),
    "geomspace": (lambda lib, a, b: lib.geomspace(a[2], b[3], 5), (V, W), (0, 1)),
    "trapezoid": (lambda lib, y, x: lib.trapezoid(y, x=lib.cumsum(x * x)), (V, W), (0, 1)),
    "trapezoid dx": (lambda lib, m: lib.trapezoid(m, dx=0.5, axis=0), (M,), (0,)),
    "ediff1d": (lambda lib, x: lib.ediff1d(x, to_begin=[1.0], to_end=2.0), (V,), (0,)),
    "interp": (lambda lib, x, fp: lib.interp(x * 2 + 0.05, np.array([-2.0, -0.5, 1.0, 3.0]), fp), (V, W), (0, 1)),
    "interp xp": (lambda lib, xp: lib.interp(np.array([0.1, 0.7]), lib.cumsum(xp * xp), W), (W,), (0,),
                  "xp batched by vmap is refused (x and fp batch)"),
    "convolve": (lambda lib, x, y: lib.convolve(x, y[:3]), (V, W), (0, 1)),
    "convolve same": (lambda lib, x, y: lib.convolve(x[:2], y, mode="same"), (V, W), (0, 1)),
    "convolve valid": (lambda lib, x, y: lib.convolve(x, y[:3], mode="valid"), (V, W), (0, 1)),
    "correlate": (lambda lib, x, y: lib.correlate(x, y[:3], mode="full"), (V, W), (0, 1)),
    "polymul": (lambda lib, x, y: lib.polymul(x, y[:2]), (V, W), (0, 1)),
    "polyadd": (lambda lib, x, y: lib.polyadd(x, y[:2]), (V, W), (0, 1)),
    "polysub": (lambda lib, x, y: lib.polysub(x[:2], y), (V, W), (0, 1)),
    "polyder": (lambda lib, x: lib.polyder(x, 2), (V,), (0,)),
    "polyint": (lambda lib, x: lib.polyint(x, k=1.5), (V,), (0,)),
    "polyval": (lambda lib, p, x: lib.polyval(p, x), (V, W), (0, 1)),
    "vander": (lambda lib, x: lib.vander(x, 3), (V,), (0,)),
    "copy": (lambda lib, x: lib.copy(x), (V,), (0,)),
    "asanyarray": (lambda lib, x: lib.asanyarray([x[0], x[1]]), (V,), (0,)),
    "ascontiguousarray": (lambda lib, m: lib.ascontiguousarray(m.T), (M,), (0,)),
    "asfortranarray": (lambda lib, m: lib.asfortranarray(m), (M,), (0,)),
    "asarray_chkfinite": (lambda lib, x: lib.asarray_chkfinite(x), (V,), (0,)),
    "bincount": (lambda lib, w: lib.bincount(np.array([2, 0, 2, 5]), w), (W,), (0,)),
}


@pytest.mark.parametrize("name", list(OPS))
def test_ops_match_numpy_and_differentiate(name):
    fun, args, argnums = OPS[name][:3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected, got = fun(np, *args), fun(anp, *args)
    assert np.shape(got) == np.shape(expected) and np.result_type(got) == np.result_type(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    check_derivatives(lambda *a: fun(anp, *a), *args, argnums=argnums)


@pytest.mark.parametrize("name", [n for n in OPS if len(OPS[n]) == 3])
def test_ops_under_vmap_match_a_loop(name):
    fun, args, argnums = OPS[name]
    batched = [np.stack([a, a * 1.01 + 0.002, a * 0.98]) if k in argnums else a for k, a in enumerate(args)]
    check_vmap(lambda *a: fun(anp, *a), *batched, in_axes=tuple(0 if k in argnums else None for k in range(len(args))))


def test_numpy_routes_new_ops_here():
    """numpy's own functions called on traced values find ours by name, as the older ops do."""
    np.testing.assert_allclose(autodiff.grad(lambda x: np.median(x))(V), autodiff.grad(anp.median)(V))
    np.testing.assert_allclose(autodiff.grad(lambda x: np.nansum(x * 2))(VNAN), [2.0, 0.0, 2.0, 2.0])
    np.testing.assert_allclose(autodiff.grad(lambda x: np.acos(x / 2).sum())(V),
                               autodiff.grad(lambda x: anp.arccos(x / 2).sum())(V))


B = np.array([5, 12, 7])
PLAIN_CASES = {  # name: (function of a library and the arguments, arguments, positions that may be traced)
    "signbit": (lambda lib, x: lib.signbit(x), (V,), (0,)), "trunc": (lambda lib, x: lib.trunc(3 * x), (V,), (0,)),
    "fix": (lambda lib, x: lib.fix(3 * x), (V,), (0,)), "spacing": (lambda lib, x: lib.spacing(x), (V,), (0,)),
    "isreal": (lambda lib, x: lib.isreal(x * (1 + 0j)), (V,), (0,)),
    "iscomplex": (lambda lib, x: lib.iscomplex(x + 1j * (x > 0)), (V,), (0,)),
    "isneginf": (lambda lib, x: lib.isneginf(x * np.array([np.inf, 1.0, 1.0, np.inf])), (V,), (0,)),
    "isposinf": (lambda lib, x: lib.isposinf(x * np.array([np.inf, 1.0, 1.0, np.inf])), (V,), (0,)),
    "around": (lambda lib, x: lib.around(x, 1), (V,), (0,)),
    "gcd": (lambda lib, b: lib.gcd(b, 4), (B,), ()), "lcm": (lambda lib, b: lib.lcm(b, 4), (B,), ()),
    "left_shift": (lambda lib, b: lib.left_shift(b, 2), (B,), ()),
    "right_shift": (lambda lib, b: lib.right_shift(b, 1), (B,), ()),
    "bitwise_left_shift": (lambda lib, b: lib.bitwise_left_shift(b, 2), (B,), ()),
    "bitwise_right_shift": (lambda lib, b: lib.bitwise_right_shift(b, 1), (B,), ()),
    "bitwise_not": (lambda lib, b: lib.bitwise_not(b), (B,), ()),
    "bitwise_invert": (lambda lib, b: lib.bitwise_invert(b), (B,), ()),
    "bitwise_count": (lambda lib, b: lib.bitwise_count(b), (B,), ()),
    "nanargmax": (lambda lib, m: lib.nanargmax(m, axis=1), (MNAN,), (0,)),
    "nanargmin": (lambda lib, x: lib.nanargmin(x), (VNAN,), (0,)),
}
REFUSED_UNDER_VMAP = {
    "flatnonzero": (lambda lib, x: lib.flatnonzero(x > 0), (V,)),
    "argpartition": (lambda lib, x: lib.argpartition(x, 1), (V,)),
    "lexsort": (lambda lib, x: lib.lexsort((x, -x)), (V,)),
    "isin": (lambda lib, x: lib.isin(x, W), (V,)),
    "digitize": (lambda lib, x: lib.digitize(x, [0.0, 1.0]), (V,)),
    "array_equiv": (lambda lib, x: lib.array_equiv(x, x), (V,)),
    "unravel_index": (lambda lib, x: lib.unravel_index((x > 0).astype(int), (2, 2)), (V,)),
    "ravel_multi_index": (lambda lib, x: lib.ravel_multi_index(((x > 0).astype(int), (x > 1).astype(int)), (2, 2)),
                          (V,)),
    "ix_": (lambda lib, x: lib.ix_((x > 0).astype(int)), (V,)),
    "packbits": (lambda lib, x: lib.packbits(x > 0), (V,)),
    "unpackbits": (lambda lib, x: lib.unpackbits((x > 0).astype(np.uint8)), (V,)),
    "min_scalar_type": (lambda lib, x: lib.min_scalar_type(x[0]), (V,)),
    "einsum_path": (lambda lib, m: lib.einsum_path("ij,kj->ik", m, m)[0], (M,)),
}
SHAPE_READERS = {
    "diag_indices_from": lambda lib, m: lib.diag_indices_from(m[:3, :3]),
    "tril_indices_from": lambda lib, m: lib.tril_indices_from(m, 1),
    "triu_indices_from": lambda lib, m: lib.triu_indices_from(m),
}


def test_every_plain_helper_is_tested():
    tested = set(PLAIN_CASES) | set(REFUSED_UNDER_VMAP) | set(SHAPE_READERS) | {"isnat", "common_type"}
    assert set(PLAIN) == tested


def _same(got, expected):
    if isinstance(expected, list):  # einsum_path's path
        assert got == expected
        return True
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        return all(_same(g, e) for g, e in zip(got, expected))
    assert type(got) in (np.ndarray, type(expected)) and np.result_type(got) == np.result_type(expected)
    np.testing.assert_array_equal(got, expected)
    return True


@pytest.mark.parametrize("name", list(PLAIN_CASES) + list(REFUSED_UNDER_VMAP))
def test_plain_helpers_match_numpy_and_strip_tracing(name):
    fun, args = (PLAIN_CASES.get(name) or REFUSED_UNDER_VMAP[name])[:2]
    _same(fun(anp, *args), fun(np, *args))
    if args[0].dtype.kind == "f":
        def f(x):  # the plain result, read under grad, next to a term that does carry the derivative
            _same(fun(anp, x, *args[1:]), fun(np, *args))
            return anp.sum(x)

        np.testing.assert_array_equal(autodiff.grad(f)(args[0]), np.ones_like(args[0]))


@pytest.mark.parametrize("name", list(PLAIN_CASES))
def test_plain_helpers_under_vmap_match_a_loop(name):
    fun, args = PLAIN_CASES[name][:2]
    batched = np.stack([args[0], args[0] * 2, -args[0]])
    expected = np.stack([fun(np, b, *args[1:]) for b in batched])
    np.testing.assert_array_equal(autodiff.vmap(lambda b: fun(anp, b, *args[1:]))(batched), expected)


@pytest.mark.parametrize("name", list(REFUSED_UNDER_VMAP))
def test_value_dependent_helpers_refuse_under_vmap(name):
    fun, args = REFUSED_UNDER_VMAP[name]
    with pytest.raises((NotImplementedError, TypeError), match=name):
        autodiff.vmap(lambda b: fun(anp, b, *args[1:]))(np.stack([args[0], args[0]]))


@pytest.mark.parametrize("name", list(SHAPE_READERS))
def test_shape_readers_read_one_examples_shape(name):
    fun = SHAPE_READERS[name]
    _same(fun(anp, M), fun(np, M))
    batch = np.stack([M, 2 * M])
    np.testing.assert_array_equal(autodiff.vmap(lambda m: m[fun(anp, m)])(batch),
                                  np.stack([m[fun(np, m)] for m in batch]))


def test_isnat_and_common_type_are_numpys():
    dates = np.array(["2020-01-01", "NaT"], dtype="datetime64[D]")
    np.testing.assert_array_equal(anp.isnat(dates), np.isnat(dates))
    assert autodiff.grad(lambda x: (anp.common_type(x, M), anp.sum(x))[1])(V).dtype == np.float64
    assert anp.common_type(V.astype(np.float32)) is np.common_type(V.astype(np.float32))
