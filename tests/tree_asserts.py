"""One comparison of two gradient-like trees, shared by the tests that compare transforms leaf by leaf."""

import numpy as np

from tests.trees import leaves


def assert_same_tree(a, b, rtol=1e-10, atol=1e-12):
    """Same structure (key paths), ``None`` at the same places, same dtypes, and values within tolerance."""
    la, lb = leaves(a), leaves(b)
    assert [p for p, _ in la] == [p for p, _ in lb]
    for (path, x), (_, y) in zip(la, lb):
        assert (x is None) == (y is None), path
        if x is not None:
            assert np.result_type(x) == np.result_type(y), path
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=str(path))
