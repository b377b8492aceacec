"""torch, the tests' oracle, when it is installed (``pip install -e '.[test]'``); without it only the tests
marked ``needs_torch`` skip, and their files still collect."""

import pytest

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the oracle; pip install -e '.[test]'")
