"""The fast path of Qrels/Run validation (:mod:`evalbridge.model.checks`) gives what the general loop of
:mod:`evalbridge.model.data` gives, or declines: same rows, same id kinds, same value types, same errors."""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalbridge.model.checks import ROW_LENGTH, freeze_plain
from evalbridge.errors import InputError
from evalbridge.model.data import Qrels, Run, rows_of

#: Values the general loop accepts (and converts) or refuses, mixed with the plain ones.
VALUES = st.one_of(st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False, width=32),
                   st.sampled_from([True, False, math.inf, -math.inf, math.nan, "1", None, 2**70]))
IDS = st.one_of(st.sampled_from(["a", "b", "c", "d1", "é"]), st.integers(0, 3))


@st.composite
def rows(draw: Any, *, plain: bool) -> dict[Any, dict[Any, Any]]:
    """Rows short or longer than ROW_LENGTH (both layouts of the fast path); ``plain``: str ids and finite floats."""
    n = draw(st.integers(1, 4))
    length = draw(st.sampled_from([0, 1, 3, ROW_LENGTH + 8]))
    out: dict[Any, dict[Any, Any]] = {}
    for i in range(n):
        qid = f"q{i}" if plain or draw(st.booleans()) else i
        size = draw(st.integers(0, length))
        if plain:
            out[qid] = {f"d{j}": draw(st.floats(-1e6, 1e6) | st.integers(-9, 9)) for j in range(size)}
        else:
            out[qid] = {draw(IDS) if draw(st.booleans()) else f"d{j}": draw(VALUES) for j in range(size)}
    return out


def _built(cls: type, data: Any, copy: bool) -> Any:
    """The object, or the error message, that ``cls(data)`` gives."""
    try:
        return cls(data, copy=copy, allow_empty=True)
    except InputError as error:
        return str(error)


@settings(max_examples=300, deadline=None)
@given(data=st.booleans().flatmap(lambda plain: rows(plain=plain)), copy=st.booleans(),
       cls=st.sampled_from([Qrels, Run]))
def test_the_fast_path_gives_what_the_general_loop_gives(data: dict, copy: bool, cls: type) -> None:
    """A dict goes through the fast path first; a read-only view of the same dict only through the loop.
    Both give equal objects (rows, id kinds, the type of every value) or the same error."""
    fast, general = _built(cls, data, copy), _built(cls, MappingProxyType(data), copy)
    if isinstance(general, str):
        assert fast == general
        return
    assert fast == general
    assert (fast.query_id_kind, fast.doc_id_kind) == (general.query_id_kind, general.doc_id_kind)
    assert {q: {d: type(v) for d, v in docs.items()} for q, docs in rows_of(fast).items()} == \
           {q: {d: type(v) for d, v in docs.items()} for q, docs in rows_of(general).items()}


@settings(max_examples=100, deadline=None)
@given(data=rows(plain=True))
def test_plain_rows_take_the_fast_path_and_are_never_shared_when_copied(data: dict) -> None:
    """str ids and finite int/float values: recognised without the loop; with copy=True no row is the caller's."""
    frozen = freeze_plain(data, copy=True)
    assert frozen is not None
    rows_, query_kind, doc_kind = frozen
    assert rows_ == data and query_kind == ("str",)
    assert doc_kind == (("str",) if any(data.values()) else ())
    assert all(rows_[q] is not data[q] for q in data)
    shared = freeze_plain(data, copy=False)
    assert shared is not None and all(shared[0][q] is data[q] for q in data)


@pytest.mark.parametrize("data", [
    {1: {"d": 1}},                  # an int query id: the loop converts it
    {"q": {1: 1}},                  # an int doc id
    {"q": {"d": True}},             # a bool value: the loop makes it an int
    {"q": {"d": math.nan}},         # not finite: the loop names it
    {"q": {"d": math.inf, "e": -math.inf}},  # a sum of NaN from two infinities
    {"q": {"d": "1"}},              # a string value (sum raises TypeError)
    {"q": MappingProxyType({"d": 1})},  # a row that is not a dict
])
def test_the_fast_path_declines_what_it_cannot_vouch_for(data: dict) -> None:
    """Anything but str ids, dict rows and finite int/float values is left to the general loop."""
    assert freeze_plain(data, copy=True) is None
    long_row = {q: {**{f"x{j}": 0.5 for j in range(ROW_LENGTH + 1)}, **row} for q, row in data.items()
                if isinstance(row, dict)}
    if long_row and long_row != data:
        assert freeze_plain(long_row, copy=True) is None


def test_rows_of_shares_the_rows_and_passes_other_mappings_through() -> None:
    """rows_of gives the object's own dict rows (no copy, no read-only wrapper), a plain mapping as it is."""
    rows_ = {"q": {"d": 1.0}}
    run = Run(rows_, copy=False)
    assert rows_of(run)["q"] is rows_["q"]
    assert rows_of(rows_) is rows_
