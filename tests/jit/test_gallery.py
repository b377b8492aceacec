"""The model gallery under ``jit(grad(loss))``: ties, partly trainable layers, functions and ints inside,
float32, complex, empty, views of one buffer, one array in two arguments.  Traced on the gallery's models, called
on moved ones (same structure and ties, other values), checked against ``grad(loss)`` run eagerly."""

import numpy as np
import pytest

import autodiff
from tests.engine.test_hvp_operator import _cases  # the gallery's models, a loss coupling every parameter
from tests.modes import REFERENCE
from tests.trees import leaves
from traversal import fmap, isnumeric


def _moved(model, seed):
    """The model with other values, its structure and ties kept (fmap maps a tied array once)."""
    rng = np.random.default_rng(seed)
    return fmap(lambda p: (p + rng.standard_normal(p.shape)).astype(p.dtype), model, exclude=isnumeric)


@pytest.mark.parametrize("name, f, args", list(_cases()), ids=[c[0] for c in _cases()])
def test_jit_of_grad_equals_grad_on_moved_models(name, f, args):
    nums = tuple(range(len(args)))
    jg = autodiff.jit(autodiff.grad(f, nums))
    jg(*args)
    if name == "one_array_in_two_arguments":
        moved = _moved(args, 1)  # one fmap over the pair keeps the array shared between the arguments
    else:
        moved = tuple(_moved(a, 1) for a in args)
    got, want = jg(*moved), autodiff.grad(f, nums)(*moved)
    rtol = 1e-5 if name == "float32" else 1e-12
    got, want = leaves(got), leaves(want)
    assert [p for p, _ in got] == [p for p, _ in want]
    for (_, a), (_, b) in zip(got, want):
        assert (a is None) == (b is None)
        if b is not None:
            if REFERENCE:
                np.testing.assert_array_equal(a, b)
            np.testing.assert_allclose(a, b, rtol=rtol)
            assert np.result_type(a) == np.result_type(b)
    assert jg.cache_info().hits == 1 and jg.cache_info().fallbacks == ()
