"""Batching rules of the model-wide reductions (``sumsq``, ``abssum``, ``maxabs``, ``linalg.norm``'s vector norm).

Each reduces a whole array, so under ``vmap`` it reduces each example: the same value composed from
``sum``/``max`` over every axis but the batch's, whose rules then give its derivatives.  They are
registered here, in a loop at the end, because ``_named.py`` is being reworked (issue 17); they belong
beside their forwards once that lands.
"""

from ..extend import defbatch
from . import _named
from . import linalg as _linalg
from ._batch_helpers import example_shape
from ._elementwise import absolute
from ._reductions import abs_squared, max, root, sum


def _over_examples(reduce):
    """The rule of a whole-array reduction: ``reduce(x, axes)`` over every axis of one example."""

    def rule(level, args, bdims, kwargs):
        (x,) = args  # one argument, so batched
        axes = tuple(range(1, len(example_shape(x, 0)) + 1))
        return reduce(x, axes), 0

    return rule


_RULES = {
    _named.sumsq: _over_examples(lambda x, axes: sum(abs_squared(x), axis=axes)),
    _named.abssum: _over_examples(lambda x, axes: sum(absolute(x), axis=axes)),
    _named.maxabs: _over_examples(lambda x, axes: max(absolute(x), axis=axes)),
    _linalg._norm: _over_examples(lambda x, axes: root(sum(abs_squared(x), axis=axes))),
}

for _prim, _rule in _RULES.items():
    defbatch(_prim, _rule)
