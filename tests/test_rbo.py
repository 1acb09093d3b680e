"""Rank-biased overlap with ties equals its authors' values (Corsi & Urbano, SIGIR 2024: their golden table and,
when given, their implementation), equals the `rbo` package on untied rankings, and keeps RBO's properties."""

from __future__ import annotations

import csv
import importlib.util
import itertools
import math
import os
import re
import warnings
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings, strategies as st

from evalbridge.stats.rbo import RBO_VARIANTS, jaccard, rbo

GOLDEN = Path(__file__).parent / "oracles" / "rbo_corsi_urbano" / "golden.csv"
SCORES = ("ext", "min", "max", "res")


def parse(text: str) -> list[list[str]]:
    """The authors' text form of a ranking ('a (b c) d': b and c tied) as tie groups."""
    return [group.strip("()").split() for group in re.findall(r"\([^)]*\)|\S+", text)]


def golden_rows() -> list[dict[str, str]]:
    with GOLDEN.open(newline="") as f:
        return list(csv.DictReader(f))


def test_every_variant_and_score_equals_the_authors_golden_table() -> None:
    rows = golden_rows()
    assert len(rows) == 600
    for row in rows:
        x, y, p = parse(row["x"]), parse(row["y"]), float(row["p"])
        for variant in RBO_VARIANTS:
            found = rbo(x, y, p=p, ties=variant)
            for score in SCORES:
                assert getattr(found, score) == pytest.approx(float(row[f"{variant}.{score}"]), abs=1e-12), \
                    (row["x"], row["y"], p, variant, score)


def test_the_readme_example_of_the_authors() -> None:
    x = parse("red (blue green) yellow pink")
    y = parse("(blue red) white (yellow black purple) green")
    expected = {"a": (0.6922853, 0.3310519, 0.8930692, 0.5620173), "w": (0.7068257, 0.3429684, 0.9049857, 0.5620173),
                "b": (0.7207131, 0.3509163, 0.9129336, 0.5620173)}
    for variant, values in expected.items():
        assert [round(v, 7) for v in rbo(x, y, p=0.95, ties=variant)[:4]] == list(values)


ITEMS = [f"d{i}" for i in range(14)]


@st.composite
def rankings(draw: st.DrawFn, *, tied: bool = True) -> list[list[str]]:
    """A ranking of distinct items from a shared pool, cut into tie groups (of one item each unless ``tied``)."""
    items = draw(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=len(ITEMS), unique=True))
    if not tied:
        return [[i] for i in items]
    sizes = draw(st.lists(st.integers(1, 4), min_size=len(items), max_size=len(items)))
    groups, start = [], 0
    for size in sizes:
        if start >= len(items):
            break
        groups.append(items[start:start + size])
        start += size
    return groups


persistence = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])


@given(rankings(tied=False), rankings(tied=False), persistence)
def test_untied_extrapolation_equals_the_rbo_package(x: list[list[str]], y: list[list[str]], p: float) -> None:
    from rbo import RankingSimilarity

    flat_x, flat_y = [g[0] for g in x], [g[0] for g in y]
    for variant in RBO_VARIANTS:
        assert rbo(x, y, p=p, ties=variant).ext == pytest.approx(RankingSimilarity(flat_x, flat_y).rbo_ext(p=p),
                                                                 abs=1e-12)


@given(rankings(tied=False), persistence)
def test_untied_depth_of_the_shorter_list_bounds_the_rbo_package_from_below(x: list[list[str]], p: float) -> None:
    from rbo import RankingSimilarity

    y = list(reversed(x))
    flat_x, flat_y = [g[0] for g in x], [g[0] for g in y]
    # the package's rbo(p) is the sum over the seen depths alone: what min adds beyond them is the tail's
    assert RankingSimilarity(flat_x, flat_y).rbo(p=p) <= rbo(x, y, p=p).min + 1e-12


def reference() -> ModuleType:
    path = os.environ.get("EVALBRIDGE_RBO_REFERENCE")
    if not path:
        pytest.skip("EVALBRIDGE_RBO_REFERENCE does not name the authors' rbo/Python/rbo.py (not redistributed; the "
                    "golden table above is their values)")
    import numpy as np

    if not hasattr(np, "in1d"):  # the authors' file calls numpy's in1d, which NumPy 2.4 removed (isin is the same)
        np.in1d = np.isin  # type: ignore[attr-defined]
    spec = importlib.util.spec_from_file_location("corsi_urbano_rbo", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@settings(max_examples=300, deadline=None)
@given(rankings(), rankings(), persistence, st.sampled_from(RBO_VARIANTS))
def test_tied_and_untied_rankings_equal_the_authors_implementation(x: list[list[str]], y: list[list[str]], p: float,
                                                                  variant: str) -> None:
    ref = reference()

    def theirs(groups: list[list[str]]) -> list[object]:
        return [g[0] if len(g) == 1 else set(g) for g in groups]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ref.rbo(theirs(x), theirs(y), p, ties=variant)
    found = rbo(x, y, p=p, ties=variant)
    for score in SCORES:
        assert getattr(found, score) == pytest.approx(expected[score], abs=1e-12)


@given(rankings(), rankings(), persistence, st.sampled_from(RBO_VARIANTS))
def test_symmetric_bounded_and_ordered(x: list[list[str]], y: list[list[str]], p: float, variant: str) -> None:
    found, swapped = rbo(x, y, p=p, ties=variant), rbo(y, x, p=p, ties=variant)
    for a, b in zip(found[:4], swapped[:4]):
        assert a == pytest.approx(b, abs=1e-12)
    assert -1e-12 <= found.min <= found.ext + 1e-12 <= found.max + 2e-12 <= 1 + 3e-12
    assert found.res == pytest.approx(found.max - found.min)


@given(rankings(tied=False), rankings(tied=False), persistence)
def test_without_ties_the_three_variants_are_one(x: list[list[str]], y: list[list[str]], p: float) -> None:
    w, a, b = (rbo(x, y, p=p, ties=v) for v in RBO_VARIANTS)
    for score in SCORES:
        assert getattr(w, score) == pytest.approx(getattr(a, score), abs=1e-12)
        assert getattr(w, score) == pytest.approx(getattr(b, score), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(rankings(), rankings(), persistence)
def test_the_a_variant_lower_bound_is_the_mean_over_every_order_of_the_ties(x: list[list[str]], y: list[list[str]],
                                                                           p: float) -> None:
    def orders(groups: list[list[str]]) -> list[list[list[str]]]:
        return [[[item] for g in combo for item in g] for combo in itertools.product(*map(itertools.permutations,
                                                                                          groups))]

    ox, oy = orders(x), orders(y)
    if len(ox) * len(oy) > 3000:
        ox, oy = ox[:1], oy[:1]
        x, y = ox[0], oy[0]
    mean = math.fsum(rbo(a, b, p=p, ties="w").min for a in ox for b in oy) / (len(ox) * len(oy))
    assert rbo(x, y, p=p, ties="a").min == pytest.approx(mean, abs=1e-12)


@given(rankings(), persistence)
def test_a_ranking_against_itself(x: list[list[str]], p: float) -> None:
    assert rbo(x, x, p=p, ties="b").ext == pytest.approx(1.0, abs=1e-12)
    assert rbo(x, x, p=p, ties="w").ext == pytest.approx(1.0, abs=1e-12)
    assert rbo(x, x, p=p, ties="a").ext <= 1 + 1e-12


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"p": 1.0}, "p must be between 0 and 1"), ({"p": 0.0}, "p must be between 0 and 1"),
    ({"p": math.nan}, "p must be between 0 and 1"), ({"p": 0.9, "ties": "average"}, "unknown treatment of ties"),
])
def test_bad_parameters_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rbo([["a"]], [["a"]], **kwargs)  # type: ignore[arg-type]


def test_bad_rankings_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one item"):
        rbo([], [["a"]], p=0.9)
    with pytest.raises(ValueError, match="group is empty"):
        rbo([[]], [["a"]], p=0.9)
    with pytest.raises(ValueError, match="appears twice"):
        rbo([["a"], ["a"]], [["a"]], p=0.9)


def test_jaccard_of_two_top_lists() -> None:
    assert jaccard(["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)
    assert jaccard(["a"], ["a"]) == 1.0
    assert math.isnan(jaccard([], []))
