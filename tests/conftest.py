import numpy as np
import pytest

collect_ignore = ["op_table.py", "gallery.py"]


@pytest.fixture
def rng():
    return np.random.default_rng(0)
