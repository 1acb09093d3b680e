"""eb.ppi through a config: a ppi: section of evalbridge run gives eb.ppi's numbers in the report, in every format,
and its mistakes are refused with the key and the fix."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import evalbridge as eb
from doors import cli

QUERIES = [f"q{i}" for i in range(60)]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    draw = random.Random(2)
    human = {q: {f"d{j}": draw.choice([0, 0, 1, 2, 3]) for j in range(8)} for q in QUERIES}
    judge = {q: {d: min(3, max(0, g + draw.choice([-1, 0, 0, 1]))) for d, g in docs.items()} for q, docs in human.items()}
    sample = draw.sample(QUERIES, 36)
    (tmp_path / "judge.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in judge.items() for d, g in docs.items()))
    (tmp_path / "human.txt").write_text("".join(f"{q} 0 {d} {human[q][d]}\n" for q in sample for d in human[q]))
    for name, noise in (("bm25", 4.0), ("dense", 1.5), ("hybrid", 2.5)):
        lines = [f"{q} Q0 {d} 1 {g + draw.random() * noise:.6f} {name}\n" for q in QUERIES for d, g in human[q].items()]
        (tmp_path / f"{name}.run").write_text("".join(lines))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _config(folder: Path, **sections: object) -> str:
    config = {"qrels": "judge.txt", "runs": {n: f"{n}.run" for n in ("bm25", "dense", "hybrid")},
              "metrics": ["nDCG@5", "P(rel=2)@5"], "seed": 3, **sections}
    (folder / "eval.yaml").write_text(json.dumps(config))  # JSON is YAML
    return "eval.yaml"


def test_a_ppi_section_gives_eb_ppi_s_numbers_in_every_format(folder: Path) -> None:
    runs = {n: eb.read_run(f"{n}.run") for n in ("bm25", "dense", "hybrid")}
    for section, keywords in (({"human": "human.txt"}, {}),
                              ({"human": "human.txt", "confidence": 0.9, "correction": "bonferroni"},
                               {"confidence": 0.9, "correction": "bonferroni"})):
        api = eb.ppi(eb.read_qrels("judge.txt"), eb.read_qrels("human.txt"), runs, ["nDCG@5", "P(rel=2)@5"],
                     baseline="bm25", **keywords)
        code, out, err = cli("run", _config(folder, ppi=section), "--no-write", "--format", "json")
        assert code == 0, err
        assert json.loads(out)["ppi"] == json.loads(json.dumps(api.to_dict()))
    for fmt in ("terminal", "markdown", "latex", "html"):
        code, out, err = cli("run", _config(folder, ppi={"human": "human.txt"}), "--no-write", "--format", fmt)
        assert code == 0, err
        assert "Prediction-powered" in out and "hybrid" in out


@pytest.mark.parametrize(("section", "message"), [
    ({}, "ppi: prediction-powered estimates need the humans' labels"),
    ({"human": "human.txt", "unit": "doc"}, "ppi.unit must be one of"),
    ({"human": "human.txt", "scale": [3, 0]}, r"ppi.scale: expected the lowest and the highest grade"),
    ({"human": "human.txt", "depth": 3}, "ppi.depth: unknown key 'depth'"),
])
def test_a_bad_ppi_section_is_refused_with_the_key_and_the_fix(folder: Path, section: dict, message: str) -> None:
    code, out, err = cli("run", _config(folder, ppi=section), "--no-write")
    assert code == 2 and "Fix:" in err, err
    assert pytest.importorskip("re").search(message, err), err
