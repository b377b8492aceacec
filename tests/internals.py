"""The internal names that tests outside ``tests/accel/`` still need, all in one place, each with the reason.

Tests use the public API (``autodiff``, ``autodiff.extend``, ``autodiff.numpy``, ``traversal``, ``layers``,
``optimisers``) wherever it can say what they check.  What is left here checks a mechanism that no public name
shows.  When an internal module moves, this is the one file of those tests to change.  The accelerations' tests
(``tests/accel/``) import their modules directly: they test an acceleration against its reference twin, and
both are internal.

>>> len(vjp_rules) > 100 and len(jvp_rules) > 100
True
>>> kernel_threads() in (1, 2)
True
"""

from autodiff._batch_rules import _batch_rules as batch_rules
from autodiff._jit.passes import PASSES
from autodiff._jit.passes.cse import cse
from autodiff._jit.passes.fold import MAX_BYTES, fold
from autodiff._jit.passes.simplify import simplify
from autodiff._jit.program import Var
from autodiff._jit.replay import replay
from autodiff._jit.split import split
from autodiff._jvp_rules import _jvp_rules as jvp_rules
from autodiff._primitive import _plain_results as plain_results
from autodiff._primitive import _rules as vjp_rules
from autodiff._protection import held_count, release
from autodiff._residuals import SMALL, Like, Plan
from autodiff._study.batch_watch import rule_name
from autodiff._study.compare_export import format_value
from autodiff._study.listing_values import value_text
from autodiff._traced import Tape, new_input, open_tape
from autodiff.numpy._broadcast import sum_to_shape
from autodiff.numpy._construction import split_flat
from autodiff.numpy._contract import contract
from autodiff.numpy._elementwise import cos_backward, sin_backward, tanh_backward
from autodiff.numpy._indexing import scatter_add
from autodiff.numpy._kinks import inverse_norm
from autodiff.numpy._linalg import matmul_nt, matmul_tn
from autodiff.numpy._namespace import AS_IS
from autodiff.numpy._plain_ops import PLAIN
from layers._batch_norm import batch_norm, bn_grad_input, bn_grad_sums
from layers._conv import conv2d, unwindow, windows
from layers._im2col import im2col
from layers._max_pool import max_pool, pool_gather, pool_scatter
from layers._normalise import batch_stats, normalise, normalise_relu
from traversal._holders import holds_traced

__all__ = [
    "sin_backward", "cos_backward", "tanh_backward", "matmul_nt", "matmul_tn", "sum_to_shape", "scatter_add",
    "inverse_norm",
    "split_flat", "windows", "unwindow", "contract",
    "conv2d", "max_pool", "batch_norm", "bn_grad_sums", "bn_grad_input", "pool_gather", "pool_scatter",
    "im2col", "batch_stats", "normalise", "normalise_relu",
    "vjp_rules", "jvp_rules", "batch_rules", "plain_results",
    "AS_IS", "PLAIN",
    "Tape", "open_tape", "new_input", "release", "Like", "Plan", "SMALL", "held_count",
    "value_text", "format_value", "rule_name", "holds_traced",
    "kernel_signatures", "kernel_threads",
    "PASSES", "cse", "fold", "simplify", "MAX_BYTES", "Var", "replay", "split",
]

# --- primitives the built-in pullbacks call -------------------------------------------------------------------
# sin_backward ... windows/unwindow run inside the pullbacks of sin, cos, tanh, matmul, broadcasting, indexing,
# anp.array and conv2d, so a second derivative differentiates them: the op table (tests/op_table.py) checks their
# own rules at orders 1 and 2, the fuzzer compares them with torch, and the JVP tests find them in the traces of
# forward-over-reverse.  ``contract`` is the one contraction every matmul form's pullback calls (checked against
# np.einsum).  ``inverse_norm`` (1 / n, 0 at n = 0) is every Euclidean norm's pullback factor: its value on one
# norm and on many is checked against numpy's division (tests/rules/test_kinks.py).  No public name reaches them
# but through a pullback.

# --- the layers' functional primitives ------------------------------------------------------------------------
# Conv2d, MaxPool2d and BatchNorm call conv2d (im2col), max_pool and batch_norm or batch_stats, normalise and
# normalise_relu (and the pullbacks bn_grad_sums, bn_grad_input, pool_gather, pool_scatter); layers has no public
# functional form.  Their argument checks, their batching rules (vmap over each alone, against a loop) and what
# each one's tape entry keeps (tests/models/test_layer_memory.py) are tested on the primitives themselves.

# --- the rule registries --------------------------------------------------------------------------------------
# Completeness checks: every primitive a group of modules defines has a JVP rule of its own, every built-in
# primitive a batching rule, and check_rules never wraps autodiff's own pullbacks.

# --- numpy's namespace ----------------------------------------------------------------------------------------
# AS_IS (numpy's own objects, given raw) and PLAIN (plain functions of plain values): test_numpy_namespace checks
# that every name of numpy's namespace is one of ours, one of these, or refused by name.

# --- the tape's own objects -----------------------------------------------------------------------------------
# What a tape keeps and frees (tests/engine/test_memory.py, test_tape.py, test_residuals.py, test_mutation.py):
# its entries (Like stand-ins, Plan), the Tape objects themselves, and the protection registry's count of holds.
# The public API shows none of them, only their effects (memory, writeable flags), which those tests check too.

# --- how the study tools write a value ------------------------------------------------------------------------
# trace, explain and compare print numbers through value_text and format_value, and name a batching rule through
# rule_name: the tests of their listings (tests/study/, tests/project/test_semantics_page.py) format their oracle's
# numbers the same way, to compare text with text.

# --- jit's passes ---------------------------------------------------------------------------------------------
# cse, fold and simplify rewrite a program (``jit(f).lower(...)``, public) into a shorter one; tests/jit/test_cse.py,
# test_fold.py and test_simplify.py run each pass alone (PASSES names them, Var builds an operand, MAX_BYTES is
# fold's size bound) and compare the rewritten program's replay, the reference interpreter, with the unrewritten
# one's, bit for bit.  ``jit(f, passes=...)`` shows only the passes' combined effect.  ``split`` cuts a pullback's
# program into the halves grad(jit(f)) runs as its forward and its pullback; tests/jit/test_split.py runs the two
# halves against the whole program's replay.

# --- traversal's holders --------------------------------------------------------------------------------------
# holds_traced: does a function reach a traced value through a holder (closure, default, bound self, partial)?
# total and the walks refuse such a function; tests/traversal/test_holders.py checks each kind of holder directly.


def kernel_signatures():
    """``{kernel name: compiled specialisations}``: the suite's end-of-session check (conftest.py) that no
    numba kernel compiled more than a few."""
    from autodiff._accel import kernels

    return kernels.signatures()


def kernel_threads():
    """The threads our large reductions use now (1 or 2): the benchmark runner sets them through
    ``autodiff._accel.parallel.set_threads`` and must give them back (tests/project/test_bench.py)."""
    from autodiff._accel import parallel

    return parallel._threads
