"""Tiers and collection design at the config's door: a config's ``tiers:`` and ``topic_set_size:`` sections give the
numbers of ``Comparison.tiers()`` and ``eb.topic_set_size`` on the same runs, show in every report format, and are
refused with the same rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalbridge as eb
from doors import write_collection
from evalbridge.errors import InputError
from evalbridge.views.formats import render

METRICS = ["nDCG@5", "P@3"]
RUNS = ("base", "new", "other", "fourth")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30 queries of 8 graded documents, four runs ranking 5 of them at random (fixed seed)."""
    return write_collection(tmp_path_factory.mktemp("tiers"), RUNS, queries=30, docs=8, ranked=5, seed=3,
                            query="q{i:02d}")


def _report(folder: Path, **sections: object) -> eb.Report:
    config = {"qrels": "qrels.txt", "runs": {n: f"{n}.run" for n in RUNS}, "metrics": METRICS, "seed": 5, **sections}
    (folder / "eval.yaml").write_text(json.dumps(config))
    return eb.run_config(eb.load_config(folder / "eval.yaml"), write=False).report


def test_a_configs_tiers_are_the_comparisons_with_its_settings(folder: Path) -> None:
    comparison = {"baseline": "base", "alpha": 0.1, "n_resamples": 300}
    report = _report(folder, comparison=comparison, tiers={"method": "bootstrap"})
    results = {name: eb.evaluate(folder / "qrels.txt", folder / f"{name}.run", METRICS) for name in RUNS}
    cmp = eb.compare(None, results, METRICS, baseline="base", alpha=0.1, n_resamples=300, seed=5)
    assert report.analyses["tiers"] == cmp.tiers(method="bootstrap")
    data = json.loads(render(report, "json"))
    assert data["tiers"] == json.loads(cmp.tiers(method="bootstrap").table("json"))
    for fmt in ("terminal", "markdown", "html", "latex"):
        assert "rank interval" in render(report, fmt)


def test_a_configs_topic_set_size_is_eb_topic_set_size(folder: Path) -> None:
    report = _report(folder, topic_set_size={"min_difference": 0.1, "beta": 0.1, "systems": 12})
    results = {name: eb.evaluate(folder / "qrels.txt", folder / f"{name}.run", METRICS) for name in RUNS}
    assert report.analyses["topic_set_size"] == eb.topic_set_size(results, METRICS, min_difference=0.1, beta=0.1,
                                                                  systems=12)
    assert json.loads(render(report, "json"))["topic_set_size"]["rows"][0]["metric"] == "nDCG@5"
    for fmt in ("terminal", "markdown", "html", "latex"):
        assert "collection design" in render(report, fmt)


@pytest.mark.parametrize(("sections", "message"), [
    ({"tiers": {"method": "scheffe"}}, "tiers.method"),
    ({"tiers": {"alpha": 2}}, "tiers.alpha"),
    ({"tiers": {"seed": 1}}, "seed"),
    ({"topic_set_size": {"beta": 1.5}}, "topic_set_size.beta"),
    ({"topic_set_size": {"systems": 1}}, "topic_set_size.systems"),
])
def test_bad_sections_are_refused_naming_the_key(folder: Path, sections: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        _report(folder, **sections)


def _cli(folder: Path, command: str, *flags: str) -> tuple[int, str, str]:
    from doors import cli

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        return cli(command, "qrels.txt", *(f"{n}={n}.run" for n in RUNS), "-m", *METRICS, "--format", "json", *flags)


def test_the_command_line_gives_the_configs_numbers(folder: Path) -> None:
    code, out, err = _cli(folder, "tiers", "--method", "tukey", "--alpha", "0.1", "--seed", "5")
    assert code == 0, err
    assert json.loads(out) == json.loads(_report(folder, tiers={"method": "tukey", "alpha": 0.1}).analyses["tiers"]
                                         .table("json"))
    code, out, err = _cli(folder, "design", "--min-difference", "0.1", "--systems", "12", "--ci-width", "0.2")
    assert code == 0, err
    expected = _report(folder, topic_set_size={"min_difference": 0.1, "systems": 12, "ci_width": 0.2})
    assert json.loads(out) == json.loads(expected.analyses["topic_set_size"].table("json"))


@pytest.mark.parametrize(("command", "flags", "message"), [
    ("tiers", ("--alpha", "2"), "--alpha must be"), ("tiers", ("--n-resamples", "0"), "--n-resamples must be"),
    ("design", ("--beta", "1"), "--beta must be"), ("design", ("--systems", "1"), "--systems must be"),
])
def test_the_command_line_refuses_bad_values_naming_the_flag(folder: Path, command: str, flags: tuple[str, ...],
                                                             message: str) -> None:
    code, out, err = _cli(folder, command, *flags)
    assert code == 2 and message in err and "Traceback" not in err
