import numpy as np
import pytest

import autodiff

collect_ignore = ["op_table.py", "gallery.py", "fuzz_programs.py"]


@pytest.fixture(scope="session", autouse=True)
def _compiled_kernels():
    """Compile the numba kernels once, up front, so no test pays for it mid-way."""
    autodiff.warmup()


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def pytest_sessionfinish(session, exitstatus):
    """After the whole suite: every kernel may keep at most 4 compiled specialisations."""
    from tests.internals import kernel_signatures

    too_many = {name: n for name, n in kernel_signatures().items() if n > 4}
    if too_many:
        print(f"\nkernels compiled too many specialisations: {too_many}")
        session.exitstatus = 1


def pytest_addoption(parser):
    parser.addoption("--fuzz-long", action="store_true",
                     help="run the fuzzers (tests/rules/test_fuzz.py, tests/jit/test_fuzz_jit.py, "
                          "tests/traversal/test_fuzz_total.py) on many new examples")
