"""Splitting a program at its late inputs: what can run before they are known, and what must wait for them.

A pullback's program takes the forward's inputs and the output cotangents.  Everything that does not depend on
a cotangent (the forward itself, and whatever the pullback computes from the forward's values alone) can run
when the forward runs; the rest runs when the cotangents come.  :func:`split` cuts a program so: its first
``n_early`` inputs are known early, the others late.  An equation is *late* when an operand is a late input or a
late equation's value; every other equation is *early*.  The **early program** takes the early inputs and gives
the outputs named ``early_outputs`` (they must not depend on a late input) followed by the **residuals**: the
early values (inputs included) that a late equation or a late output reads.  The **late program** takes the
residuals, then the late inputs, and gives the program's other outputs.  Run one after the other they compute
what the program computes, equation for equation: nothing runs twice, nothing is left out (an early equation
nothing reads is dropped, as ``dce`` would).

This is JAX's partial evaluation of a linearized program, by dependence alone: one forward sweep marks the late
values, one backward sweep the residuals; no recursion.

>>> import numpy as np, autodiff, autodiff.numpy as anp
>>> def step(x, g):  # a value, and a pullback's cotangent g
...     y = anp.sin(x)
...     return anp.sum(y), g * anp.cos(x)
>>> program = autodiff.jit(step, passes=()).lower(np.zeros(3), np.ones(()))
>>> early, late = split(program, 1, [0])
>>> print(early)
program step[early]
  in  %0:float64[3]
  %2 = sin(%0) -> float64[3]
  %3 = sum(%2) -> float64[]
  %4 = cos(%0) -> float64[3]
  out (%3, %4)
>>> print(late)
program step[late]
  in  %0:float64[3]  %1:float64[]
  %2 = multiply(%1, %0) -> float64[3]
  out (%2,)
"""

from .._trees import walk_flatten
from .passes.dce import needed
from .program import Program, Var, renamed


def split(program, n_early, early_outputs):
    """``(early program, late program)`` of ``program`` whose inputs from ``n_early`` on are late; the early
    program gives the outputs at positions ``early_outputs``, then the residuals; the late program takes the
    residuals, then the late inputs, and gives the other outputs in order."""
    late = _late_values(program, n_early)
    late_outputs = [o for k, o in enumerate(program.outputs) if k not in set(early_outputs)]
    for k in early_outputs:
        out = program.outputs[k]
        if type(out) is Var and out.ref in late:
            raise ValueError(f"split: output {k} of {program.name} depends on a late input")
    late_eqs = [eq for eq in program.equations if eq.out in late]
    residuals = _residuals(late_eqs, late_outputs, late)
    early = _early_program(program, late, [program.outputs[k] for k in early_outputs] + residuals)
    return early, _late_program(program, late_eqs, residuals, n_early, late_outputs)


def _late_values(program, n_early):
    """The values that depend on a late input: one sweep in program order."""
    late = set(range(n_early, program.n_inputs))
    for eq in program.equations:
        if any(type(a) is Var and a.ref in late for a in eq.operands):
            late.add(eq.out)
    return late


def _residuals(late_eqs, late_outputs, late):
    """The early values the late equations and outputs read, each once, in order of first reading."""
    read = [a for eq in late_eqs for a in eq.operands] + list(late_outputs)
    return list({a.ref: a for a in read if type(a) is Var and a.ref not in late}.values())


def _early_program(program, late, outputs):
    """The early equations that ``outputs`` need (none other), on the early inputs."""
    kept = needed([eq for eq in program.equations if eq.out not in late], outputs)
    n_early = program.n_inputs - len({ref for ref in late if ref < program.n_inputs})
    avals = program.avals[:n_early] + [None] * (program.size - n_early)  # late inputs' slots: never read
    for eq in kept:
        avals[eq.out] = program.avals[eq.out]
    return Program(f"{program.name}[early]", n_early, kept, avals, outputs, walk_flatten(tuple(outputs))[1],
                   program.captured)


def _late_program(program, late_eqs, residuals, n_early, late_outputs):
    """The late equations, numbered anew: the residuals first, then the late inputs, then their values."""
    order = [r.ref for r in residuals] + list(range(n_early, program.n_inputs)) + [eq.out for eq in late_eqs]
    number = {ref: k for k, ref in enumerate(order)}
    equations = [eq._replace(operands=tuple(renamed(a, number) for a in eq.operands), out=number[eq.out])
                 for eq in late_eqs]
    outputs = [renamed(o, number) for o in late_outputs]
    return Program(f"{program.name}[late]", len(order) - len(late_eqs), equations,
                   [program.avals[ref] for ref in order], outputs, walk_flatten(tuple(outputs))[1],
                   program.captured)
