"""evalbridge warns (EvalbridgeWarning) about input that was read but probably does not mean what was meant."""

from __future__ import annotations

import warnings

import evalbridge as eb


def test_the_warning_is_public_and_a_user_warning_so_filters_catch_it() -> None:
    assert issubclass(eb.EvalbridgeWarning, UserWarning)
    assert "EvalbridgeWarning" in dir(eb)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("ids never meet", eb.EvalbridgeWarning, stacklevel=1)
    assert [w.category for w in caught] == [eb.EvalbridgeWarning]
