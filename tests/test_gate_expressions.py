"""A gate is checked before any work, alike at every door (check_gates, a config through `evalbridge run`, and
load_config): an empty or null expression, an empty list, a threshold no bounded metric can meet or miss, a
number beyond float64, digits other than 0-9: each refused with the fix (exit 2), never a TypeError or no gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from doors import PREFIX, cli

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq2 0 d4 1\n"
RUN_A = "q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 a\nq2 Q0 d3 1 2 a\nq2 Q0 d4 2 1 a\n"
RUN_B = "q1 Q0 d2 1 2 b\nq1 Q0 d1 2 1 b\nq2 Q0 d4 1 2 b\nq2 Q0 d3 2 1 b\n"


def _doors(folder: Path, gates: dict[str, Any]) -> dict[str, tuple[int, str]]:
    import evalbridge as eb

    (folder / "qrels.txt").write_text(QRELS)
    (folder / "a.run").write_text(RUN_A)
    (folder / "b.run").write_text(RUN_B)
    config = {"qrels": "qrels.txt", "runs": {"a": "a.run", "b": "b.run"}, "metrics": ["P@1", "nDCG@2", "DCG@2"],
              "comparison": {"baseline": "a", "n_resamples": 100}, "gates": gates}
    (folder / "eval.yaml").write_text(json.dumps(config))
    out: dict[str, tuple[int, str]] = {}
    try:
        results = {name: eb.evaluate(str(folder / "qrels.txt"), str(folder / f"{name}.run"),
                                     ["P@1", "nDCG@2", "DCG@2"]) for name in ("a", "b")}
        eb.check_gates(gates, results, baseline="a")
        out["api"] = (0, "")
    except eb.EvalbridgeError as error:
        out["api"] = (2, str(error))
    except Exception as error:  # noqa: BLE001 - what reaches a Python user unwrapped is the finding
        out["api"] = (3, f"{type(error).__name__}: {error}")
    try:
        eb.load_config(str(folder / "eval.yaml"))
        out["load_config"] = (0, "")
    except eb.EvalbridgeError as error:
        out["load_config"] = (2, str(error))
    except Exception as error:  # noqa: BLE001
        out["load_config"] = (3, f"{type(error).__name__}: {error}")
    code, _, err = cli("run", str(folder / "eval.yaml"), "--no-write", "-q")
    out["config"] = (code, " ".join(line.removeprefix(PREFIX) for line in err.strip().splitlines()))
    return out


REFUSED = {
    "null": ({"P@1": None}, "null"),
    "empty": ({"P@1": ""}, "empty"),
    "blank": ({"P@1": "   "}, "empty"),
    "empty list": ({"P@1": []}, "no expression"),
    "a mapping": ({"P@1": {"min": 0.5}}, "not an expression"),
    "a null in a list": ({"P@1": [">= 0.5", None]}, "null"),
    "above the ceiling": ({"P@1": ">= 2"}, "can never pass"),
    "above the ceiling at a level": ({"P@1": ">= 2 at 95%"}, "can never pass"),
    "strictly above the ceiling": ({"nDCG@2": "> 1.5"}, "can never pass"),
    "below the floor": ({"P@1": ">= -0.5"}, "can never fail"),
    "below the floor, at most": ({"P@1": "<= -0.1"}, "can never pass"),
    "an offset beyond the width": ({"P@1": ">= baseline - 5"}, "can never fail"),
    "a gain beyond the width": ({"nDCG@2": ">= baseline + 1.5"}, "can never pass"),
    "beyond float64": ({"DCG@2": ">= 1e400"}, "1e400"),
    "an offset beyond float64": ({"DCG@2": ">= baseline - 1e400"}, "1e400"),
    "Arabic-Indic level": ({"P@1": ">= baseline at \u0669\u0665%"}, "digits other than 0-9"),
    "Arabic-Indic threshold": ({"P@1": ">= \u0660.\u0665"}, "digits other than 0-9"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_gate_nothing_can_decide_is_refused_at_every_door(tmp_path: Path, case: str) -> None:
    gates, says = REFUSED[case]
    for door, (code, message) in _doors(tmp_path, gates).items():
        assert code == 2, (door, message)
        assert says in message and "Fix:" in message, (door, message)
        assert "TypeError" not in message, (door, message)


@pytest.mark.parametrize("gates", [{"P@1": "<= 1"}, {"P@1": ">= 0"}, {"P@1": "> 1"}, {"nDCG@2": ">= baseline - 1"},
                                   {"DCG@2": ">= 100"}, {"P@1": [">= 0.5", ">= baseline - 0.01 at 95%"]}])
def test_a_gate_on_a_bound_or_on_an_unbounded_metric_is_kept(tmp_path: Path, gates: dict[str, Any]) -> None:
    """A threshold on a bound itself is kept (a gate may be trivially met), as is any threshold of a sum (DCG)."""
    for door, (code, message) in _doors(tmp_path, gates).items():
        assert code in (0, 1), (door, message)


def test_the_bounds_of_a_metric_follow_its_options() -> None:
    import math

    from evalbridge.metrics.spec import parse_metric

    assert parse_metric("P@5").bounds == (0.0, 1.0)
    assert parse_metric("DCG@10").bounds == (0.0, math.inf)
    assert parse_metric("RBP(weights=raw)").bounds == (-math.inf, math.inf)
    assert parse_metric("RBP").bounds == (0.0, 1.0)
    assert parse_metric("nDCG(gains={0:0,1:5})@10").bounds == (-math.inf, math.inf)
