"""The plain steps of ``Descent``, ``Momentum``, ``Nesterov``, ``Adam`` and ``AdamW`` as one-pass numba kernels.

A rule's ``apply`` (:mod:`optimisers._rules`, the reference) is written in numpy arithmetic so that it
differentiates; on plain arrays each operation is a pass over memory and a new array.  Adam makes eleven of
them, and ``x - step`` one more: ``update`` of ResNet-18's 11 million float32 parameters took 98 ms with Adam
and 29 ms with Descent; with these kernels 21.8 ms with Adam, where torch's ``optim.Adam`` takes 18.7 ms
(6 fused; bench/kernels.py's ``adam_update``).  Each kernel here reads the
array, its gradient and its state once and writes the new array and state once, into recycled buffers
(:mod:`autodiff._accel.buffers`), with the reference's operations in the reference's order and precision, so its
results are the reference's to the last bit (``tests/accel/test_optimiser_fused.py``).

:func:`take` is called by ``update``'s walk (:mod:`optimisers._accel`) for the steps of plain C-ordered
float32/float64 arrays whose rule is one of these five with number hyperparameters; any other step (traced
values, a custom rule, a rule chain) runs the reference.  Off under ``AUTODIFF_REFERENCE=1``,
``AUTODIFF_ACCEL_OFF=kernels`` or without numba.

>>> import numpy as np
>>> from optimisers import Adam, _tree, setup
>>> w, g = np.ones(1 << 16, np.float32), np.full(1 << 16, 2.0, np.float32)
>>> steps = _tree._collect(setup(Adam(0.1), w), w, g)
>>> taken = take(steps)  # a kernel took the step (when numba is here): the new array, the state advanced
>>> reference = _tree._update(setup(Adam(0.1), w), w, g)[1]  # the rule's numpy code
>>> bool(np.array_equal(taken[id(w)], reference)) if taken else True
True
"""

import math
from dataclasses import fields

import numpy as np

from autodiff._accel import buffers as _buffers
from autodiff._accel import parallel as _parallel
from autodiff._accel.numba_jit import FAST, Kernel, readonly, writable

from ._rules import Adam, AdamW, Descent, Momentum, Nesterov, OptimiserChain

MIN_SIZE = 1 << 15  # elements: below, numpy's few passes over cached memory cost less than a kernel call


def _descent(x, dx, lr, new_x):
    for i in range(x.size):
        new_x[i] = x[i] - dx[i] * lr


def _momentum(x, dx, v, rho, lr, new_v, new_x):
    for i in range(x.size):
        vi = rho * v[i] + dx[i]
        new_v[i] = vi
        new_x[i] = x[i] - lr * vi


def _nesterov(x, dx, v, rho, lr, new_v, new_x):
    for i in range(x.size):
        vi = rho * v[i] + dx[i]
        new_v[i] = vi
        new_x[i] = x[i] - lr * (dx[i] + rho * vi)


def _adam(x, dx, m, v, b1, c1, d1, b2, c2, d2, lr, eps, decay, decoupled, new_m, new_v, new_x):
    """Adam's step; with ``decoupled`` (1, not 0) AdamW's, which adds ``decay * x`` (``decay = lr * weight_decay``)."""
    for i in range(x.size):
        mi = b1 * m[i] + c1 * dx[i]
        vi = b2 * v[i] + c2 * dx[i] * dx[i]
        new_m[i] = mi
        new_v[i] = vi
        step = lr * (mi / d1) / (math.sqrt(vi / d2) + eps)
        new_x[i] = x[i] - (step + decay * x[i]) if decoupled != 0 else x[i] - step


def _signature(inputs, scalars, outputs):
    return lambda t, d: t.void(*[readonly(t, d, 1) for _ in range(inputs)], *[d] * scalars,
                               *[writable(t, d, 1) for _ in range(outputs)])


_DESCENT = Kernel(_descent, _signature(2, 1, 1))
_MOMENTUM = Kernel(_momentum, _signature(3, 2, 2))
_NESTEROV = Kernel(_nesterov, _signature(3, 2, 2))
_ADAM = Kernel(_adam, _signature(4, 10, 3))


def _new(x):
    """A new array like ``x``, recycled when a large one is free, and its flat view for the kernel."""
    out = _buffers.empty(x.shape, x.dtype)
    return out, out.reshape(-1)


def _flat(*arrays):
    """1-D views of C-ordered arrays of one shape and float dtype, or ``None`` when any is not one."""
    first = arrays[0]
    for a in arrays:
        if type(a) is not np.ndarray or a.dtype != first.dtype or a.shape != first.shape or not a.flags.c_contiguous:
            return None
    return [a.reshape(-1) for a in arrays] if first.dtype in FAST else None


def _work(k, inputs, scalars, outputs):
    """``work(start, stop)``: the compiled kernel ``k`` over that range of the flat inputs and outputs."""
    return lambda start, stop: k(*[a[start:stop] for a in inputs], *scalars, *[a[start:stop] for a in outputs])


def _descent_step(rule, state, x, dx):
    flat = _flat(x, dx)
    k = None if flat is None else _DESCENT.compiled(x.dtype)
    if k is None:
        return None
    new_x, x_out = _new(x)
    return state, new_x, _work(k, flat, (x.dtype.type(rule.lr),), (x_out,))


def _momentum_step(rule, v, x, dx):
    flat = _flat(x, dx, v)
    k = None if flat is None else (_NESTEROV if type(rule) is Nesterov else _MOMENTUM).compiled(x.dtype)
    if k is None:
        return None
    (new_v, v_out), (new_x, x_out), d = _new(x), _new(x), x.dtype.type
    return new_v, new_x, _work(k, flat, (d(rule.rho), d(rule.lr)), (v_out, x_out))


def _adam_step(rule, state, x, dx):
    m, v, t = state
    flat = _flat(x, dx, m, v) if type(t) is int else None  # a numpy count would make numpy compute in float64
    k = None if flat is None else _ADAM.compiled(x.dtype)
    if k is None:
        return None
    t += 1
    (new_m, m_out), (new_v, v_out), (new_x, x_out) = _new(x), _new(x), _new(x)
    d, decoupled = x.dtype.type, type(rule) is AdamW  # each factor is a Python float, rounded to the array's
    scalars = (d(rule.beta1), d(1 - rule.beta1), d(1 - rule.beta1 ** t), d(rule.beta2),  # dtype as numpy rounds it
               d(1 - rule.beta2), d(1 - rule.beta2 ** t), d(rule.lr), d(rule.eps),
               d(rule.lr * rule.weight_decay if decoupled else 0), d(decoupled))
    return (new_m, new_v, t), new_x, _work(k, flat, scalars, (m_out, v_out, x_out))


_STEPS = {Descent: _descent_step, Momentum: _momentum_step, Nesterov: _momentum_step, Adam: _adam_step,
          AdamW: _adam_step}


def take(steps):
    """``{id(x): new x}`` for the steps a kernel took, each one's state advanced (``steps[k].states[0]``).  The
    others are left to the reference: small or traced arrays (MAML), a custom rule, a traced learning rate; with
    a rule chain among the steps none is taken (a global rule such as ClipNorm reads every gradient at its
    stage, so the reference runs them all)."""
    large = [(key, s) for key, s in steps.items() if type(s.x) is np.ndarray and s.x.size >= MIN_SIZE]
    if not large or any(_staged(s.leaf.rule) for s in steps.values()):
        return {}
    done, works = {}, []
    for key, s in large:
        result = _kernel_step(s)
        if result is not None:
            s.states[0], done[key], work = result
            works.append((work, s.x.size, s.x.itemsize))
    _run(works)
    return done


def _staged(rule):
    """A rule chain, or a global rule (ClipNorm): the reference runs every step, stage by stage."""
    return isinstance(rule, OptimiserChain) or getattr(rule, "is_global", False)


def _kernel_step(s):
    """``(new state, new array, work)`` for the step ``s``, or ``None`` when no kernel runs its rule (a custom
    rule, or a hyperparameter that is no plain number)."""
    rule = s.leaf.rule
    if type(rule) not in _STEPS or not _plain_numbers(rule):
        return None
    return _STEPS[type(rule)](rule, s.states[0], s.x, s.dx)


def _run(works):
    """Every ``work`` over its range in pieces of ``CHUNK`` elements, shared with autodiff's kernel thread when
    there is enough memory to stream (elementwise, so the pieces give the same bits on any thread)."""
    pieces = [(work, start, min(start + _parallel.CHUNK, n)) for work, n, _ in works
              for start in range(0, n, _parallel.CHUNK)]
    share = _parallel.splits_bytes(sum(n * size for _, n, size in works))
    _parallel.run_pieces(pieces, lambda work, start, stop: work(start, stop), share)


def _plain_numbers(rule):
    """Every hyperparameter a Python float or int.  numpy computes with those in the array's dtype, as the
    kernels do; a numpy float64 scalar would make it compute a float32 step in float64, and a traced learning
    rate (learned, in MAML) must be differentiated: the reference does both."""
    return all(type(getattr(rule, name)) in (float, int) for name in _HYPERPARAMETERS[type(rule)])


_HYPERPARAMETERS = {cls: tuple(f.name for f in fields(cls)) for cls in _STEPS}
