"""traversal._holders.holds_traced: a traced value is found in every kind of holder its table names (and in a
subclass of one), a function that reaches none is not flagged, and a holder that holds itself ends the search."""

import functools

import numpy as np
import pytest

import autodiff
from tests.internals import holds_traced


class _Slotted:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Plain:
    def __init__(self, value):
        self.value = value

    def method(self, p):
        return p * self.value


class _MyList(list):
    pass


def _make_closure(v):
    return lambda p: p * v


def _make_default(v):
    return lambda p, scale=v: p * scale


def _make_kwdefault(v):
    def f(p, *, scale=v):
        return p * scale

    return f


HOLDERS = {
    "closure": _make_closure,
    "default": _make_default,
    "keyword default": _make_kwdefault,
    "partial argument": lambda v: functools.partial(lambda s, p: p * s, v),
    "partial keyword": lambda v: functools.partial(lambda p, s: p * s, s=v),
    "bound self (__dict__)": lambda v: _Plain(v).method,
    "closure over a list": lambda v: _make_closure([1.0, v]),
    "closure over a tuple": lambda v: _make_closure((v,)),
    "closure over a dict": lambda v: _make_closure({"v": v}),
    "closure over a list subclass": lambda v: _make_closure(_MyList([v])),
    "closure over slots": lambda v: _make_closure(_Slotted(v)),
}


def _found(make):
    """Whether holds_traced sees the traced value ``make`` puts into a function, and sees nothing with a plain one."""
    seen = []
    autodiff.grad(lambda lam: seen.append(holds_traced(make(lam))) or lam)(1.0)
    return seen[0], holds_traced(make(1.0))


@pytest.mark.parametrize("kind", list(HOLDERS))
def test_a_traced_value_is_found_in_each_kind_of_holder(kind):
    assert _found(HOLDERS[kind]) == (True, False)


def test_a_holder_that_holds_itself_ends_the_search():
    box = []
    box.append(box)
    f = _make_closure(box)
    assert holds_traced(f) is False
    seen = []
    autodiff.grad(lambda lam: seen.append(holds_traced(_make_closure([box, {"deep": [lam]}]))) or lam)(1.0)
    assert seen == [True]


def test_arrays_and_numbers_are_not_looked_into():
    assert holds_traced(_make_closure(np.ones(3))) is False
    assert holds_traced(_make_closure(("text", 3, 2.0, None))) is False
