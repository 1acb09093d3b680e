"""The run diff through every door: eb.diff, a config's diff: section (the report against the baseline) and
``evalbridge diff`` show the same queries, values and documents, and refuse the same bad values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalbridge as eb
from doors import cli
from evalbridge.errors import InputError
from evalbridge.views.formats import render

QRELS = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 a 1\nq2 0 d 2\nq3 0 e 1\n"
BASE = "q1 Q0 a 1 3.0 x\nq1 Q0 x 2 2.0 x\nq1 Q0 b 3 1.0 x\nq2 Q0 d 1 2.0 x\nq2 Q0 y 2 1.0 x\nq3 Q0 e 1 1.0 x\n"
NEW = "q1 Q0 x 1 3.0 x\nq1 Q0 c 2 2.0 x\nq1 Q0 a 3 1.0 x\nq2 Q0 a 1 2.0 x\nq2 Q0 d 2 1.0 x\nq3 Q0 e 1 1.0 x\n"
METRICS = ["P@2", "nDCG@3"]


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    for name, text in (("qrels.txt", QRELS), ("base.run", BASE), ("new.run", NEW)):
        (tmp_path / name).write_text(text)
    return tmp_path


def _api(folder: Path, **options: object) -> dict:
    d = eb.diff(folder / "qrels.txt", folder / "base.run", folder / "new.run", METRICS, names=("base", "new"),
                **options)
    return d.to_dict()


def _config(folder: Path, diff: object) -> dict:
    (folder / "eval.yaml").write_text(json.dumps({
        "qrels": "qrels.txt", "runs": {"base": "base.run", "new": "new.run"}, "metrics": METRICS,
        "comparison": {"baseline": "base", "n_resamples": 100}, "diff": diff}))
    outcome = eb.run_config(eb.load_config(folder / "eval.yaml"), write=False)
    return json.loads(render(outcome.report, "json"))["diffs"]["new"]


def _cli(folder: Path, *flags: str) -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        return cli("diff", "qrels.txt", "base.run", "new.run", "-m", *METRICS, "--format", "json", *flags)


def test_the_three_doors_agree(folder: Path) -> None:
    api = _api(folder, k=2, queries=5)
    config = _config(folder, {"k": 2, "queries": 5})
    code, out, err = _cli(folder, "-k", "2", "--queries", "5")
    assert code == 0, err
    command_line = json.loads(out)
    for door in (config, command_line):
        assert api["queries"] == door["queries"] and api["changes"] == door["changes"]
        assert api["means"] == door["means"] and api["systems"] == door["systems"] == ["base", "new"]
    q1 = next(q for q in api["queries"] if q["query"] == "q1")
    assert [(c["doc"], c["grade"], c["rank_a"], c["rank_b"]) for c in q1["left"]] == [("a", 2.0, 1, 3)]
    assert [(c["doc"], c["grade"]) for c in q1["entered"]] == [("c", 0.0)]
    assert [c["doc"] for c in q1["unjudged_entered"]] == [] and [c["doc"] for c in q1["moves"]] == ["x"]


def test_bad_values_are_refused_alike(folder: Path) -> None:
    with pytest.raises(InputError, match="k must be an integer >= 1; got 0"):
        _api(folder, k=0)
    with pytest.raises(InputError, match=r"eval.yaml:\d+: diff.k must be an integer >= 1; got 0"):
        _config(folder, {"k": 0})
    code, _, err = _cli(folder, "-k", "0")
    assert code == 2 and "-k must be an integer >= 1; got 0" in err and "Traceback" not in err
    code, _, err = _cli(folder, "--ties", "average")
    assert code == 2 and "--ties docid_desc" in err


def test_a_diff_on_spark_is_refused_where_it_is_written(folder: Path) -> None:
    (folder / "spark.yaml").write_text("qrels: qrels.txt\nruns: {base: base.run, new: new.run}\nmetrics: [P@2]\n"
                                       "engine: spark\ndiff: true\n")
    with pytest.raises(InputError, match=r"spark.yaml:5: diff: .*engine: spark.*Fix: remove diff"):
        eb.load_config(folder / "spark.yaml")


def test_a_configs_diff_with_similarity_keys_equals_the_api_with_similarity(folder: Path) -> None:
    """diff: {p, rbo_ties} (the keys of evalbridge diff --p --rbo-ties) shows the rankings' similarity beside the
    metrics, the numbers of eb.diff(..., similarity=True, p=, ties=); a bad p is refused where it is written."""
    api = _api(folder, k=2, p=0.8, ties="w", similarity=True)
    config = _config(folder, {"k": 2, "p": 0.8, "rbo_ties": "w"})
    assert api["similarity"] is not None and config["similarity"] == api["similarity"]
    assert config["queries"] == api["queries"] and config["means"] == api["means"]
    assert _config(folder, {"k": 2}).get("similarity") is None            # left out: no similarity, as before
    with pytest.raises(InputError, match=r"eval.yaml:\d+: diff.p must be a number in \(0, 1\); got 1.5"):
        _config(folder, {"p": 1.5})
    with pytest.raises(InputError, match=r"eval.yaml:\d+: diff.rbo_ties must be one of"):
        _config(folder, {"rbo_ties": "x"})


def test_two_rankings_without_judgements_are_one_config_at_every_door(folder: Path) -> None:
    """diff: {runs: {a, b}} in a config without runs or qrels compares the two rankings alone, the numbers of
    eb.diff(None, a, b) and of evalbridge diff RUN_A RUN_B; its output never overwrites one of its runs."""
    api = eb.diff(None, folder / "base.run", folder / "new.run", names=("base", "new"), k=2, p=0.8).to_dict()
    (folder / "rankings.yaml").write_text(json.dumps({"diff": {"k": 2, "p": 0.8, "runs": {"base": "base.run",
                                                                                              "new": "new.run"}}}))
    outcome = eb.run_config(eb.load_config(folder / "rankings.yaml"), write=False)
    config = outcome.report.analyses["diff"]["new"].to_dict()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        code, out, err = cli("diff", "base.run", "new.run", "-k", "2", "--p", "0.8", "--format", "json")
        assert code == 0, err
        assert api["similarity"] is not None and config == api == json.loads(out)
        code, _, err = cli("diff", "base.run", "new.run", "-o", "new.run")
        assert code == 2 and "would destroy the input" in err and (folder / "new.run").read_text() == NEW
        code, _, err = cli("diff", "base.run", "new.run", "--rbo-ties", "z")
        assert code == 2 and "--rbo-ties must be one of 'w', 'a', 'b'" in err
    (folder / "both.yaml").write_text(json.dumps({"qrels": "qrels.txt", "runs": {"base": "base.run", "new": "new.run"},
                                                  "metrics": METRICS, "diff": {"runs": {"a": "base.run", "b": "new.run"}}}))
    with pytest.raises(InputError, match=r"both.yaml:\d+: diff.runs: a diff of its own runs compares their rankings"):
        eb.load_config(folder / "both.yaml")
