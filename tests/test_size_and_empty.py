"""Size options are checked against what they can mean before any work, and an analysis with nothing to work on
says so, at every door (the Python API, the command line, a config)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from doors import PREFIX, cli

N = 20
QRELS = "".join(f"q{i} 0 d1 1\nq{i} 0 d2 0\n" for i in range(N))
#: a: d1 first everywhere (P@1 = 1); b: d1 first on the even queries (P@1 = 1/2)
RUN_A = "".join(f"q{i} Q0 d1 1 2 a\nq{i} Q0 d2 2 1 a\n" for i in range(N))
RUN_B = "".join(f"q{i} Q0 {'d1' if i % 2 == 0 else 'd2'} 1 2 b\nq{i} Q0 {'d2' if i % 2 == 0 else 'd1'} 2 1 b\n"
                for i in range(N))


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "empty.txt").write_text("")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _diagnosis_json(*argv: str) -> dict:
    code, out, err = cli(*argv)
    assert code == 0, err
    return json.loads(out)


def test_a_pool_depth_beyond_every_ranking_means_the_deepest_ranking_at_every_door(folder: Path) -> None:
    """diagnose --pool-depth 1000000000 on 20 queries of depth 2 tried to allocate 298 GiB (MemoryError, exit 3);
    it is the pool at depth 2, the same numbers at every door."""
    import evalbridge as eb

    qrels, runs = eb.read_qrels("qrels.txt"), {"a": eb.read_run("a.run"), "b": eb.read_run("b.run")}
    options = dict(trials=20, n_resamples=200, seed=0)
    deep = eb.diagnose(qrels, runs, "P@1", pool_depth=10**9, **options)
    shallow = eb.diagnose(qrels, runs, "P@1", pool_depth=2, **options)
    assert deep.to_dict() == shallow.to_dict()
    common = ("-m", "P@1", "--trials", "20", "--n-resamples", "200", "--format", "json")
    by_cli = _diagnosis_json("diagnose", "qrels.txt", "a.run", "b.run", "--pool-depth", str(10**9), *common)
    assert by_cli == _diagnosis_json("diagnose", "qrels.txt", "a.run", "b.run", "--pool-depth", "2", *common)
    (folder / "eval.yaml").write_text(json.dumps({
        "qrels": "qrels.txt", "runs": {"a": "a.run", "b": "b.run"}, "metrics": ["P@1"],
        "diagnose": {"pool_depth": 10**9, "trials": 20, "n_resamples": 200}}))
    code, out, err = cli("run", "eval.yaml", "--no-write", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["diagnosis"]["pool_bias"] == by_cli["pool_bias"]


def test_diagnose_of_qrels_without_a_judgement_says_so_at_every_door(folder: Path) -> None:
    import evalbridge as eb

    runs = {"a": eb.read_run("a.run"), "b": eb.read_run("b.run")}
    with pytest.raises(eb.InputError, match="no judgement.*Fix:"):
        eb.diagnose({}, runs, "P@1", trials=10, n_resamples=100)
    with pytest.raises(eb.InputError, match="no judgement.*Fix:"):
        eb.diagnose({"q1": {}}, runs, "P@1", trials=10, n_resamples=100)
    code, _, err = cli("diagnose", "empty.txt", "a.run", "b.run", "-m", "P@1")
    assert code == 2 and "empty.txt" in err and "Fix:" in err
    (folder / "eval.yaml").write_text(json.dumps({"qrels": "empty.txt", "runs": {"a": "a.run", "b": "b.run"},
                                                  "metrics": ["P@1"], "diagnose": True}))
    code, _, err = cli("run", "eval.yaml", "--no-write")
    assert code == 2 and "empty.txt" in err and "Fix:" in err


@pytest.mark.parametrize("side", ["before", "after"])
def test_what_changed_with_one_side_without_a_judgement_says_so_at_every_door(folder: Path, side: str) -> None:
    """An empty side gave tables of nothing ('pairs 0'), and a ship decision of a tie; now it is refused."""
    import evalbridge as eb

    runs = {"a": eb.read_run("a.run"), "b": eb.read_run("b.run")}
    qrels = eb.read_qrels("qrels.txt")
    sides = {"before": qrels, "after": qrels, side: {}}
    with pytest.raises(eb.InputError, match=f"the judgements {side} hold no judgement.*Fix:"):
        eb.what_changed(sides["before"], sides["after"], runs, ["P@1"], n_resamples=100)
    files = {"before": "qrels.txt", "after": "qrels.txt", side: "empty.txt"}
    code, _, err = cli("changed", files["before"], files["after"], "a.run", "b.run", "-m", "P@1")
    assert code == 2 and "empty.txt" in err and "Fix:" in err
    (folder / "eval.yaml").write_text(json.dumps({"qrels": files["after"], "runs": {"a": "a.run", "b": "b.run"},
                                                  "metrics": ["P@1"], "changed": {"before": files["before"]}}))
    code, _, err = cli("run", "eval.yaml", "--no-write")
    assert code == 2 and "empty.txt" in err and "Fix:" in err, err
