"""One table of ops for the tests: each line names an op, how to call it and its inputs.

``shapes`` draws the input shapes (broadcasting pairs included); ``domain``
maps standard-normal draws into the op's domain.  Tests are generated from
this table, never written op by op.
"""

from collections.abc import Callable
from dataclasses import dataclass

import hypothesis.strategies as st
import numpy as np

import autodiff.numpy as anp
from autodiff.numpy import _broadcast as B
from autodiff.numpy import _elementwise as E
from autodiff.numpy import _indexing as Ix


def anything(x):
    return x


def positive(x):
    return np.abs(x) + 0.5


def away_from_zero(x):
    return np.where(x >= 0, x + 0.5, x - 0.5)


dims = st.integers(1, 4)
shape = st.lists(dims, min_size=0, max_size=3).map(tuple)
matrix_dims = st.integers(1, 4)


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast together: size-1 axes and missing leading axes."""
    full = draw(st.lists(dims, min_size=0, max_size=3))
    def shrink(s):
        s = [1 if draw(st.booleans()) else n for n in s]
        return tuple(s[draw(st.integers(0, len(s))):])
    return shrink(full), shrink(full)


def one(strategy=shape):
    return strategy.map(lambda s: (s,))


def nonempty_shape():
    return st.lists(dims, min_size=1, max_size=3).map(tuple)


@st.composite
def reduce_case(draw):
    s = draw(nonempty_shape())
    axis = draw(st.one_of(st.none(), st.integers(-len(s), len(s) - 1)))
    return (s,), {"axis": axis, "keepdims": draw(st.booleans())}


@st.composite
def matmul_shapes(draw):
    n, m, k = draw(matrix_dims), draw(matrix_dims), draw(matrix_dims)
    batch = draw(st.sampled_from([(), (2,), (1,)]))
    kind = draw(st.sampled_from(["mm", "mv", "vm", "vv", "batched"]))
    return {
        "mm": ((n, k), (k, m)),
        "mv": ((n, k), (k,)),
        "vm": ((k,), (k, m)),
        "vv": ((k,), (k,)),
        "batched": ((2,) + (n, k), batch + (k, m)),
    }[kind]


@st.composite
def dot_shapes(draw):
    n, k = draw(matrix_dims), draw(matrix_dims)
    return draw(st.sampled_from([((n, k), (k,)), ((k,), (k, n)), ((k,), (k,)), ((), (n,)), ((n, k), (k, n))]))


@st.composite
def index_case(draw):
    s = draw(nonempty_shape())
    kind = draw(st.sampled_from(["slice", "int", "repeat", "mask", "neg"]))
    index = {
        "slice": (slice(None, None, 2),),
        "int": (s[0] - 1,),
        "repeat": (np.array([0, 0, s[0] - 1, 0]),),
        "mask": (np.arange(s[0]) % 2 == 0,),
        "neg": (slice(None, -1) if s[0] > 1 else slice(None),),
    }[kind]
    return (s,), {"index": index[0]}


@st.composite
def transpose_case(draw):
    s = draw(shape)
    return (s,), {"axes": tuple(draw(st.permutations(range(len(s)))))}


@st.composite
def reshape_case(draw):
    s = draw(shape)
    return (s,), {"shape": (-1,) if draw(st.booleans()) else tuple(reversed(s))}


def plain(strategy):
    """Shapes only, no keyword arguments."""
    return strategy.map(lambda shapes: (shapes, {}))


@dataclass(frozen=True)
class Op:
    name: str
    fn: Callable
    cases: st.SearchStrategy  # draws (shapes, kwargs)
    domain: Callable = anything

    def __repr__(self):
        return self.name


def _where(c, x, y):
    return anp.where(c > 0, x, y)


OPS = [
    Op("add", anp.add, plain(broadcast_pair())),
    Op("subtract", anp.subtract, plain(broadcast_pair())),
    Op("multiply", anp.multiply, plain(broadcast_pair())),
    Op("divide", anp.divide, plain(broadcast_pair()), away_from_zero),
    Op("power", anp.power, plain(broadcast_pair()), positive),
    Op("negative", anp.negative, plain(one())),
    Op("exp", anp.exp, plain(one())),
    Op("log", anp.log, plain(one()), positive),
    Op("sin", anp.sin, plain(one())),
    Op("cos", anp.cos, plain(one())),
    Op("tanh", anp.tanh, plain(one())),
    Op("sin_backward", E.sin_backward, plain(one().map(lambda s: s * 2))),
    Op("cos_backward", E.cos_backward, plain(one().map(lambda s: s * 2))),
    Op("tanh_backward", E.tanh_backward, plain(one().map(lambda s: s * 2))),
    Op("sqrt", anp.sqrt, plain(one()), positive),
    Op("square", anp.square, plain(one())),
    Op("absolute", anp.absolute, plain(one()), away_from_zero),
    Op("where", lambda x, y: _where(x, x, y), plain(broadcast_pair()), away_from_zero),
    Op("sum", anp.sum, reduce_case()),
    Op("mean", anp.mean, reduce_case()),
    Op("matmul", anp.matmul, plain(matmul_shapes())),
    Op("dot", anp.dot, plain(dot_shapes())),
    Op("reshape", anp.reshape, reshape_case()),
    Op("transpose", anp.transpose, transpose_case()),
    Op("getitem", lambda x, index: x[index], index_case()),
    Op("broadcast_to", lambda x: anp.broadcast_to(x, (2,) + np.shape(x)), plain(one())),
    Op("cast", lambda x: B.cast(B.cast(x, np.dtype(np.float64)) * 1.5, B.dtype_of(x)), plain(one())),
    Op("sum_to_shape", lambda x: B.sum_to_shape(x, (1,) + np.shape(x)[1:]), plain(one(nonempty_shape()))),
    Op("scatter_add", lambda g: Ix.scatter_add(g, (5,), np.result_type(g), np.array([0, 0, 3])),
       plain(st.just(((3,),)))),
    Op("concatenate", lambda x, y: anp.concatenate([x, y * 2.0, x], axis=-1),
       plain(one(nonempty_shape()).map(lambda s: s * 2))),
    Op("astype", lambda x: anp.astype(anp.astype(x, np.float64) * 1.5, B.dtype_of(x)), plain(one())),
    Op("linalg.norm", anp.linalg.norm, plain(one())),
    Op("sumsq", anp.sumsq, plain(one())),
    Op("abssum", anp.abssum, plain(one()), away_from_zero),
    Op("maxabs", anp.maxabs, plain(one()), away_from_zero),
    Op("stack", lambda x, y: anp.stack([x, y * 2.0], axis=-1), plain(one().map(lambda s: s * 2))),
    Op("swapaxes", lambda x: anp.swapaxes(x, 0, -1), plain(one(nonempty_shape()))),
    Op("expand_dims", lambda x: anp.expand_dims(x, 0), plain(one())),
    Op("squeeze", lambda x: anp.squeeze(x), plain(one())),
    Op("operators", lambda x, y: (x * y[0] - 1.0 / (2.0 + y * y)[1:]) ** 2 + (-x) @ y.T + x.sum() * y.mean(),
       plain(st.just(((2, 3), (3, 3))))),
]
