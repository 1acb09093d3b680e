"""An analysis of the registry gets its command from its entry: the parser (its keys as flags, typed and checked by
the analysis's rules) and the handler (the command line run as a config with its section through the one pipeline),
with no module of the command line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from doors import cli
from evalbridge.common.parameters import Interval, rule_table

RULES = rule_table(Interval("scale", float, 0, None, closed="neither", default=1.0,
                            fix="the factor the means are multiplied by, e.g. 2."))


@dataclass(frozen=True)
class ToySettings:
    scale: float = 1.0


def _toy() -> Any:
    from evalbridge.config.analyses import Analysis, Command

    def read(check: Any, value: Any, given: Any) -> ToySettings | None:
        if value is None:
            return None
        spec = check.mapping(value, ("toy",), ("scale",), "{scale: 2}")
        return ToySettings(**toy.checked(check, spec, ("scale",), ToySettings))

    def run(ctx: Any, settings: ToySettings) -> dict[str, float]:
        label = ctx.config.metrics[0].label
        return {name: settings.scale * results[label] for name, results in ctx.results.items()}

    toy = Analysis("toy", "{scale}: each system's first mean, scaled", read, run, lambda: RULES,
                   command=Command("toy", "each run's first mean, scaled", "A toy analysis.", "QRELS, then the runs",
                                   "RUN...", ("scale",), lambda found, fmt: json.dumps(found, sort_keys=True)))
    return toy


@pytest.fixture()
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalbridge.config import analyses, pipeline, schema

    every = (*analyses.ANALYSES, _toy())
    keys = {**analyses.TOP_KEYS, "toy": "a toy"}
    for module in (analyses, pipeline, schema):
        monkeypatch.setattr(module, "ANALYSES", every, raising=False)
    for module in (analyses, schema):
        monkeypatch.setattr(module, "TOP_KEYS", keys, raising=False)


def test_a_new_analysis_of_the_registry_gets_its_command_with_no_module_of_its_own(
        registered: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalbridge.cli import COMMANDS, build_parser, commands

    assert "toy" in COMMANDS and "toy" in commands(build_parser())
    assert not (Path(__file__).parent.parent / "evalbridge" / "cli" / "toy.py").exists()
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "x.run").write_text("q1 Q0 a 1 2.0 x\nq2 Q0 c 1 1.0 x\n")
    (tmp_path / "y.run").write_text("q1 Q0 a 1 2.0 y\nq2 Q0 b 1 1.0 y\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("toy", "qrels.txt", "x.run", "y.run", "-m", "P@1", "--scale", "2")
    assert code == 0, err
    assert json.loads(out) == {"x": 1.0, "y": 2.0}
    code, _, err = cli("toy", "qrels.txt", "x.run", "y.run", "-m", "P@1", "--scale", "-1")
    assert code == 2 and "--scale must be a number > 0; got -1.0" in err and "Fix: the factor" in err
    code, _, err = cli("toy", "qrels.txt", "x.run", "-m", "P@1", "--scale", "x")
    assert code == 2 and "--scale" in err


@dataclass(frozen=True)
class PairSettings:
    judges: Any
    runs: Any
    metrics: Any
    bins: Any


def _pair() -> Any:
    """A toy analysis alone (its own judges and runs, no config runs) of two named judgements, the runs as its own, a
    list default for -m and a list of numbers given for both judges or per judge."""
    from evalbridge.config.analyses import Analysis, Command, Judgements
    from evalbridge.config.sections import read_source

    def read(check: Any, value: Any, given: Any) -> PairSettings | None:
        if value is None:
            return None
        spec = check.mapping(value, ("pair",), ("judges", "runs", "metrics", "bins"), "{judges: {a: a.txt, b: b.txt}}")
        judges = {name: read_source(check, source, ("pair", "judges", name), given.folder, "qrels", "local", {})
                  for name, source in spec["judges"].items()}
        runs = {name: read_source(check, source, ("pair", "runs", name), given.folder, "run", "local", {})
                for name, source in spec.get("runs", {}).items()}
        bins = spec.get("bins")
        if isinstance(bins, dict) and set(bins) - set(judges):
            raise check.fail(("pair", "bins", next(iter(set(bins) - set(judges)))), "unknown judge.")
        return PairSettings(judges, runs, spec["metrics"], bins)

    def run(ctx: Any, settings: PairSettings) -> dict[str, Any]:
        return {"judges": {name: len(ctx.judgements(source)) for name, source in settings.judges.items()},
                "runs": {name: len(ctx.run(name, source)) for name, source in settings.runs.items()},
                "metrics": settings.metrics, "bins": settings.bins}

    return Analysis("pair", "{judges, runs, metrics, bins}: two judges", read, run, lambda: {},
                    sources=lambda s: (*s.judges.values(), *s.runs.values()), alone=lambda value: True,
                    command=Command("pair", "two judges", "A toy of two judges.", "runs of its own", "RUN", (),
                                    lambda found, fmt: json.dumps(found, sort_keys=True),
                                    judgements=(Judgements("judges", "QRELS_A", "the first", named=True,
                                                           own={"bins": "--bins-a"}),
                                                Judgements("judges", "QRELS_B", "the second", named=True,
                                                           own={"bins": "--bins-b"})),
                                    metric=("P@1", "RR"), metrics="metrics", nargs="*", own_runs="runs",
                                    names="--names", naming=lambda paths: [Path(p).stem for p in paths],
                                    numbers={"bins": "thresholds"}))


def test_named_judgements_own_runs_and_per_judge_numbers_are_declared_not_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalbridge.config import analyses, pipeline, schema

    every = (*analyses.ANALYSES, _pair())
    for module in (analyses, pipeline, schema):
        monkeypatch.setattr(module, "ANALYSES", every, raising=False)
    for module in (analyses, schema):
        monkeypatch.setattr(module, "TOP_KEYS", {**analyses.TOP_KEYS, "pair": "a toy"}, raising=False)
    (tmp_path / "human.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "llm.txt").write_text("q1 0 a 0\n")
    (tmp_path / "x.run").write_text("q1 Q0 a 1 2.0 x\nq2 Q0 c 1 1.0 x\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("pair", "human.txt", "llm.txt", "x.run", "--bins-b", "0.5")
    assert code == 0, err
    assert json.loads(out) == {"judges": {"human": 2, "llm": 1}, "runs": {"x": 2}, "metrics": ["P@1", "RR"],
                               "bins": {"llm": [0.5]}}
    code, out, err = cli("pair", "human.txt", "llm.txt", "--names", "h", "l", "-m", "AP", "--bins", "1", "2")
    assert code == 0, err
    assert json.loads(out) == {"judges": {"h": 2, "l": 1}, "runs": {}, "metrics": "AP", "bins": [1.0, 2.0]}
    code, _, err = cli("pair", "human.txt", "llm.txt", "--bins", "1", "--bins-a", "2")
    assert code == 2 and "give either --bins (both judges) or --bins-a / --bins-b (one each), not both" in err
    code, _, err = cli("pair", "human.txt", "missing.txt")
    assert code == 2 and "QRELS_B: missing.txt" in err
    code, _, err = cli("pair", "human.txt", "llm.txt", "missing.run")
    assert code == 2 and "RUN: missing.run" in err
