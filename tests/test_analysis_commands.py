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
