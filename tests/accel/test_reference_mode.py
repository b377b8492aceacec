"""The two modes agree: the accelerated engine and the reference core (``AUTODIFF_REFERENCE=1``).

One process per mode computes, on every gallery model (and a few models large enough for the threads,
buffer pools and layer kernels to engage), the loss, its gradient, and a Hessian-vector product in both
``hvp`` modes, each three times so that compiled layouts are learnt and then used.  The reference side runs
in a subprocess and saves an ``.npz``; the accelerated side runs here (or, when this suite itself runs under
``AUTODIFF_REFERENCE=1``, in a subprocess without it), and they must agree: rtol 1e-10 for float64, 1e-5 for
float32.  Each side also checks which accelerations were on (:data:`SWITCHES`).
"""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import layers
import optimisers
from autodiff import _backward, _hooks, _primitive
from autodiff._accel import buffers as _buffers
from autodiff._accel import elementwise as _accel_elementwise
from autodiff._accel import flatten as _accel_flatten
from autodiff._accel import kernels as _kernels
from autodiff._accel import layouts as _layouts
from autodiff._accel import numba_jit as _jit
from autodiff._accel import parallel as _parallel
from autodiff._accel import reductions as _accel_reductions
from autodiff._hooks import hooks
from autodiff._trees import leaves
from autodiff.numpy import _batch_ops, _kinks
from optimisers import _fused as _opt_fused
from optimisers import _tree as _opt_tree
from traversal import _collect, fmap, isnumeric, total

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HVP_MODES = ("reverse_over_forward", "forward_over_reverse")
REPEATS = 3  # a structure is compiled on its second walk and read by its layout from the third


def _layouts_on():
    return _layouts.ENABLED and bool(_accel_flatten.LAYOUTS.get(dict))


def _kernels_on():
    return _kernels.kernel("sumsq") is not None


# Which accelerations are on, each read after the models ran: (name, check, is it on in default mode?).
# A check whose acceleration cannot be on here (numba missing, one core) says so in default mode instead
# of failing; in reference mode every one must be off.  Adding an acceleration is one line.
SWITCHES = [
    ("compiled layouts", _layouts_on, lambda: _layouts.ENABLED),  # AUTODIFF_ACCEL_OFF=layouts turns them off alone
    ("autodiff numba kernels", _kernels_on, lambda: _kernels._use_numba() and _has_numba()),
    ("layers numba kernels", lambda: _conv_kernel() is not None, lambda: _jit.use_numba() and _has_numba()),
    ("kernel thread", lambda: _parallel._pool is not None, lambda: not _parallel._SERIAL),
    ("buffer pool", lambda: _buffers.POOLING and bool(_buffers._pool), lambda: _buffers.POOLING),
    ("numba imported", lambda: "numba" in sys.modules, lambda: _kernels._use_numba() and _has_numba()),
    ("unrolled recording", lambda: hooks.record is not _primitive._record, lambda: True),
    ("unrolled backward pass", lambda: hooks.backward is not _backward.backward, lambda: True),
    ("fused known reductions", lambda: _accel_reductions.lookup(anp.sumsq) is not None, lambda: True),
    ("one norm's inverse without where", lambda: hooks.inverse_norm is not _kinks._one_over, lambda: True),
    ("fast collectors", lambda: hooks.parameters is not _collect.reference_parameters, lambda: True),
    ("pooled batched outer products", lambda: hooks.batched_outer is not _batch_ops._batched_outer, lambda: True),
    ("optimiser update walk", lambda: hooks.updater is not _opt_tree._update, lambda: True),
    ("optimiser step kernels", lambda: _opt_fused._ADAM._compiled.get(np.dtype(np.float64)),
     lambda: _jit.use_numba() and _has_numba()),
    ("float64 tanh kernel", lambda: hooks.tanh is not np.tanh,
     lambda: not _accel_elementwise.numpy_tanh_is_vectorised()),  # on AVX-512, numpy's own is faster
]


def _has_numba():
    return importlib.util.find_spec("numba") is not None


def _conv_kernel():
    """A float64 im2col/col2im kernel a convolution compiled (``None`` if none did, as under the reference)."""
    from layers import _im2col

    kernels = (_im2col.IM2COL, _im2col.IM2COL_PLANES, _im2col.COL2IM)
    return next((k for k in (kernel._compiled.get(np.dtype(np.float64)) for kernel in kernels) if k), None)


def _models():
    from tests.gallery import gallery

    rng = np.random.default_rng(7)
    models = {name: m for name, m in gallery().items() if name not in ("empty", "complex")}
    # 9.6 MB of float64 and float32 parameters: over the threads' 8 MB and the pools' 1 MB thresholds
    models["large"] = {"w": rng.standard_normal(900_000), "v": rng.standard_normal((600, 500)).astype(np.float32)}
    models["conv"] = layers.Chain([layers.Conv2d.init(2, 3, 3, padding=1, seed=1, dtype=np.float64), np.tanh,
                                   layers.MaxPool2d(2)])
    return models


_IMAGES = np.random.default_rng(3).standard_normal((2, 2, 6, 6))


def _loss(m):
    if isinstance(m, layers.Chain):
        return anp.sum(anp.sin(m(_IMAGES)) ** 2) + total(anp.sumsq, m)
    return total(lambda p: anp.sum(anp.sin(p) * p ** 2), m) + total(anp.sumsq, m) ** 2


def _direction(model):
    rng = np.random.default_rng(0)
    return fmap(lambda p: np.asarray(rng.standard_normal(np.shape(p)), np.asarray(p).dtype), model,
                exclude=isnumeric)


def _arrays(prefix, tree):
    """``{prefix/path: array}`` for every numeric leaf of ``tree`` (``None`` leaves dropped: the paths say)."""
    return {f"{prefix}{path}": np.asarray(x) for path, x in leaves(tree)
            if x is not None and np.asarray(x).dtype.kind in "fc"}


def results():
    """Every figure this test compares, as ``{name: array}``, computed in this process's mode."""
    out = {}
    for name, model in _models().items():
        v = _direction(model)
        for _ in range(REPEATS):
            value, g = autodiff.value_and_grad(_loss)(model)
            hvps = {mode: autodiff.hvp(_loss, (model,), (v,), mode=mode)[0] for mode in HVP_MODES}
        out[f"{name}/value"] = np.asarray(value)
        out.update(_arrays(f"{name}/grad", g))
        state, stepped = optimisers.update(optimisers.setup(optimisers.Adam(0.01), model), model, g)
        out.update(_arrays(f"{name}/Adam step", stepped))
        again = optimisers.update(state, stepped, g)[0]
        out.update(_arrays(f"{name}/Adam state", [leaf.state for leaf in _opt_tree._state_leaves(again)]))
        for mode, h in hvps.items():
            out.update(_arrays(f"{name}/hvp {mode}", h))
    return out


def switches():
    """``{acceleration: on?}``, read after :func:`results` ran."""
    return {name: bool(on()) for name, on, _ in SWITCHES}


def _save(path):
    """The subprocess's work: the results and the switches it saw, in one ``.npz``."""
    np.savez(path, **results(), **{f"switch/{k}": np.array(v) for k, v in switches().items()})


def _run_mode(tmp_path, reference):
    """Results and switches of a fresh process in the given mode."""
    env = {k: v for k, v in os.environ.items() if k != "AUTODIFF_REFERENCE"}
    if reference:
        env["AUTODIFF_REFERENCE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    path = tmp_path / f"{'reference' if reference else 'default'}.npz"
    code = (f"import autodiff, tests.accel.test_reference_mode as t; autodiff.warmup(); t._save({str(path)!r})")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    with np.load(path) as saved:
        arrays = dict(saved)
    seen = {k.split("/", 1)[1]: bool(arrays.pop(k)) for k in list(arrays) if k.startswith("switch/")}
    return arrays, seen


@pytest.fixture(scope="module")
def both_modes(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("modes")
    reference = _run_mode(tmp_path, reference=True)
    default = _run_mode(tmp_path, reference=False)  # fresh, as the reference side: in this worker another test
    return reference, default  # may have imported numba itself (seen under AUTODIFF_ACCEL_OFF=kernels)


def test_reference_mode_switches_every_acceleration_off(both_modes):
    (_, seen), _ = both_modes
    assert set(seen) == {name for name, _, _ in SWITCHES}
    assert not any(seen.values()), f"on under AUTODIFF_REFERENCE=1: {[k for k, v in seen.items() if v]}"


def test_default_mode_uses_every_acceleration_it_can(both_modes):
    _, (_, seen) = both_modes
    expected = {name: bool(possible()) for name, _, possible in SWITCHES} if not _hooks.REFERENCE else None
    if expected is None:  # the default side ran in a subprocess: what it could use is its own business
        assert seen["compiled layouts"] and seen["buffer pool"], seen
        return
    assert seen == expected, "an acceleration that can run here did not engage; the comparison would be hollow"


def test_both_modes_give_the_same_values_gradients_and_hvps(both_modes):
    (reference, _), (default, _) = both_modes
    assert sorted(reference) == sorted(default)
    assert len(default) > 60  # every gallery model, its gradient and both hvps: not an empty comparison
    for key, want in default.items():
        got = reference[key]
        assert got.dtype == want.dtype and got.shape == want.shape, key
        rtol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-10
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-3, err_msg=key)
