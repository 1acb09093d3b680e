"""eb.ppi through its three doors: the Python API, evalbridge ppi and a config's ppi: section give the same numbers
(the plan and the batch too), in every format; mistakes are refused with the key or the flag and the fix."""

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


def _run_json(folder: Path, **sections: object) -> dict:
    code, out, err = cli("run", _config(folder, **sections), "--no-write", "--format", "json")
    assert code == 0, err
    return json.loads(out)


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


def test_evalbridge_ppi_gives_the_same_numbers_plan_and_batch_as_the_api_and_the_config(folder: Path) -> None:
    runs = {n: eb.read_run(f"{n}.run") for n in ("bm25", "dense", "hybrid")}
    api = eb.ppi(eb.read_qrels("judge.txt"), eb.read_qrels("human.txt"), runs, ["nDCG@5", "P(rel=2)@5"],
                 baseline="bm25", correction="bh")
    code, out, err = cli("ppi", "judge.txt", *(f"{n}.run" for n in runs), "--human", "human.txt", "-m", "nDCG@5",
                         "P(rel=2)@5", "--correction", "bh", "--plan-width", "0.05", "--cost-human", "2",
                         "--batch", "next.jsonl", "--batch-size", "4", "--format", "json")
    assert code == 0, err
    shown = json.loads(out)
    plan = shown.pop("plan")
    assert shown == json.loads(json.dumps(api.to_dict()))
    assert plan == json.loads(json.dumps(api.plan(width=0.05, cost_human=2.0).to_dict()))
    api.write_batch(folder / "api.jsonl", 4)
    assert (folder / "next.jsonl").read_text() == (folder / "api.jsonl").read_text()
    report = _run_json(folder, ppi={"human": "human.txt", "correction": "bh"})
    assert report["ppi"] == shown


def test_evalbridge_ppi_refuses_bad_input_naming_the_flag(folder: Path) -> None:
    code, _, err = cli("ppi", "judge.txt", "bm25.run", "--human", "human.txt", "-m", "P@5", "--scale", "3", "0")
    assert code == 2 and "--scale" in err and "Fix:" in err, err
    code, _, err = cli("ppi", "judge.txt", "bm25.run", "--human", "human.txt", "-m", "nDCG@5", "--unit", "pair")
    assert code == 2 and "nDCG is not" in err and "Traceback" not in err, err
    code, _, err = cli("ppi", "judge.txt", "bm25.run", "--human", "human.txt", "-m", "P@5", "-o", "judge.txt")
    assert code == 2 and "judge.txt" in err, err
    code, _, err = cli("ppi", "judge.txt", "bm25.run", "--human", "human.txt", "-m", "P@5", "--cost-human", "1")
    assert code == 2 and "--plan-width" in err, err


@pytest.mark.parametrize("fmt", ["json", "terminal", "markdown"])
def test_the_plan_and_the_batch_are_the_same_at_the_three_doors(folder: Path, fmt: str) -> None:
    """eb.ppi(...).with_plan(...) (the plan of .plan(...) carried after the estimates) and write_batch, evalbridge ppi
    --plan-difference --cost-* --batch --batch-size --by, and a config's ppi: {plan_difference, cost_*, batch,
    batch_size, by}: the same text in every format and the same batch bytes; --no-write writes no batch."""
    runs = {n: eb.read_run(f"{n}.run") for n in ("bm25", "dense", "hybrid")}
    api = eb.ppi(eb.read_qrels("judge.txt"), eb.read_qrels("human.txt"), runs, ["nDCG@5", "P(rel=2)@5"],
                 baseline="bm25")
    planned = api.with_plan(difference=0.03, cost_human=2.0, cost_llm=0.01)
    assert planned.planned == api.plan(difference=0.03, cost_human=2.0, cost_llm=0.01)
    api.write_batch(folder / "api.jsonl", 6, by="systems")
    code, out, err = cli("ppi", "judge.txt", *(f"{n}.run" for n in runs), "--human", "human.txt", "-m", "nDCG@5",
                         "P(rel=2)@5", "--plan-difference", "0.03", "--cost-human", "2", "--cost-llm", "0.01",
                         "--batch", "cli.jsonl", "--batch-size", "6", "--by", "systems", "--format", fmt)
    assert code == 0, err
    assert out == planned.table(fmt)
    assert "wrote cli.jsonl: the next 6 queries to label (systems)" in err
    section = {"human": "human.txt", "plan_difference": 0.03, "cost_human": 2, "cost_llm": 0.01,
               "batch": "config.jsonl", "batch_size": 6, "by": "systems"}
    report = _run_json(folder, ppi=section)
    assert not (folder / "config.jsonl").exists()  # --no-write
    assert report["ppi"] == json.loads(json.dumps(planned.to_dict()))
    code, _, err = cli("run", _config(folder, ppi=section), "-q", "--output-dir", "report")
    assert code == 0, err
    assert (folder / "cli.jsonl").read_bytes() == (folder / "api.jsonl").read_bytes() \
        == (folder / "config.jsonl").read_bytes()


@pytest.mark.parametrize(("section", "flags", "config_says", "cli_says"), [
    ({"cost_llm": 1}, ["--cost-llm", "1"], "ppi.cost_llm: cost_human / cost_llm price a plan",
     "--cost-human / --cost-llm price a plan, and no plan is asked for. Fix: add --plan-width W"),
    ({"topics": "human.txt"}, ["--topics", "human.txt"], "ppi.topics: topics / corpus give the texts of a judging",
     "--topics / --corpus give the texts of a judging batch, and no --batch file is named. Fix: add --batch"),
    ({"batch": "bm25.run"}, ["--batch", "bm25.run"], "ppi.batch: the output 'bm25.run' is the input 'bm25.run'",
     "the output 'bm25.run' is the input 'bm25.run'"),
    ({"batch": "sub"}, ["--batch", "sub"], "ppi.batch: the output 'sub' is a folder", "the output 'sub' is a folder"),
    ({"plan_width": 0.1, "plan_difference": 0.1}, ["--plan-width", "0.1", "--plan-difference", "0.1"],
     "ppi.plan_difference: a plan is for a target width (plan_width) or",
     "a plan is for a target width (--plan-width) or a target difference (--plan-difference), not both"),
    ({"batch": "b.jsonl", "batch_size": 0}, ["--batch", "b.jsonl", "--batch-size", "0"],
     "ppi.batch_size must be an integer >= 1", "--batch-size must be an integer >= 1"),
])
def test_a_plan_or_batch_asked_wrongly_is_refused_before_any_work_at_both_doors(
        folder: Path, section: dict, flags: list, config_says: str, cli_says: str) -> None:
    (folder / "sub").mkdir()
    code, _, err = cli("run", _config(folder, ppi={"human": "human.txt", **section}), "-q", "--output-dir", "out")
    assert code == 2 and "eval.yaml:" in err and config_says in err, err
    code, out, err = cli("ppi", "judge.txt", "bm25.run", "dense.run", "--human", "human.txt", "-m", "P@5", *flags)
    assert code == 2 and cli_says in err and not out, err
    assert not (folder / "out").exists() and not (folder / "b.jsonl").exists()
