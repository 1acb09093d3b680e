"""The reproduction measures (RMSE of per-query values, effect ratio, delta relative improvement) equal repro_eval's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from evalbridge.stats.reproduction import delta_relative_improvement, effect_ratio, rmse

values = st.floats(0, 1, allow_nan=False, width=32)


def scores(column: list[float]) -> dict[str, dict[str, float]]:
    """repro_eval's shape: topic -> measure -> value."""
    return {f"t{i}": {"ndcg": float(v)} for i, v in enumerate(column)}


@st.composite
def experiments(draw: st.DrawFn) -> tuple[list[float], ...]:
    n = draw(st.integers(1, 30))
    m = draw(st.integers(1, 30))
    column = st.lists(values, min_size=n, max_size=n)
    other = st.lists(values, min_size=m, max_size=m)
    return draw(column), draw(column), draw(other), draw(other)


@given(st.integers(1, 40).flatmap(lambda n: st.tuples(*[st.lists(values, min_size=n, max_size=n)] * 2)))
def test_rmse_equals_repro_eval(pair: tuple[list[float], list[float]]) -> None:
    from repro_eval.measure.effectiveness import RMSE

    original, reproduced = pair
    assert rmse(np.array(original), np.array(reproduced)) == pytest.approx(
        RMSE(scores(original), scores(reproduced))["ndcg"], abs=1e-12)


@given(experiments())
def test_effect_ratio_and_delta_ri_equal_repro_eval(runs: tuple[list[float], ...]) -> None:
    from repro_eval.measure.overall_effects import DRI, ER

    o, ob, r, rb = runs
    arrays = [np.array(v) for v in runs]
    effect = sum(a - b for a, b in zip(o, ob)) / len(o)
    if abs(effect) > 1e-9:
        expected = ER(scores(o), scores(ob), scores(r), scores(rb))["ndcg"]
        assert effect_ratio(*arrays) == pytest.approx(expected, rel=1e-9, abs=1e-9)
    if min(sum(ob), sum(rb)) > 1e-9:
        expected = DRI(scores(o), scores(ob), scores(r), scores(rb))["ndcg"]
        assert delta_relative_improvement(*arrays) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_a_run_reproduced_exactly() -> None:
    a, b = np.array([0.2, 0.5, 0.9]), np.array([0.1, 0.4, 0.3])
    assert rmse(a, a) == 0
    assert effect_ratio(a, b, a, b) == 1
    assert delta_relative_improvement(a, b, a, b) == 0


def test_no_original_effect_or_a_zero_baseline_gives_nan() -> None:
    a, zero = np.array([0.3, 0.5]), np.zeros(2)
    assert math.isnan(effect_ratio(a, a, a, zero))
    assert math.isnan(delta_relative_improvement(a, zero, a, zero))


@pytest.mark.parametrize(("original", "reproduced", "message"), [
    ([], [], "at least one"), ([0.1, math.nan], [0.1, 0.2], "not a finite number"),
    ([0.1, 0.2], [0.1], "on the same queries"),
])
def test_bad_values_are_refused(original: list[float], reproduced: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rmse(np.array(original), np.array(reproduced))
