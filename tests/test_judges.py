"""The judges' report card (evalbridge.evalsets.judges): on the LLMJudge labels (15 LLM label sets against the humans on
4,423 pairs), every kappa and confusion table equals scikit-learn's, per-grade precision and recall equal
scikit-learn's, the judge with grade 5 is named as out of scale, and with runs the system orders' tau and tau_AP equal
the ranking agreement's; every door (API, CLI, config) gives the same numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.evalsets.judges import judges

LLMJUDGE = "data/real/llmjudge"


def aligned(human: eb.Qrels, judge: eb.Qrels) -> tuple[list[float], list[float]]:
    pairs = [(human[q][d], g) for q in judge for d, g in judge[q].items() if q in human and d in human[q]]
    return [h for h, _ in pairs], [j for _, j in pairs]


@pytest.fixture(scope="module")
def llmjudge(shared):
    folder = shared / LLMJUDGE
    labels = {path.stem: path for path in sorted((folder / "judges").glob("*.qrels"))}
    return folder / "human.test.qrels", labels, judges(folder / "human.test.qrels", labels)


def test_every_kappa_and_confusion_equals_scikit_learn(llmjudge):
    from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_score, recall_score

    human_path, labels, report = llmjudge
    human = eb.read_qrels(human_path)
    assert len(report.cards) == 15
    for name, path in labels.items():
        card = report[name]
        h, j = aligned(human, eb.read_qrels(path))
        categories = list(card.agreement.categories)
        assert card.agreement.shared_pairs == len(h) == 4423
        assert [list(row) for row in card.agreement.confusion] == confusion_matrix(h, j, labels=categories).tolist()
        for weights, ours in ((None, card.kappa), ("linear", card.linear_kappa), ("quadratic", card.quadratic_kappa)):
            assert ours == pytest.approx(cohen_kappa_score(h, j, labels=categories, weights=weights), abs=1e-12)
        assert card.kappa == pytest.approx(cohen_kappa_score(h, j), abs=1e-12)  # plain kappa: whatever the labels
        used = [c for c in categories if c in set(j)]
        theirs = dict(zip(used, precision_score(h, j, labels=used, average=None, zero_division=np.nan)))
        for c, p in zip(categories, card.precision):
            if c in theirs:
                assert p == pytest.approx(theirs[c], abs=1e-12)
        recalls = dict(zip(categories, recall_score(h, j, labels=categories, average=None, zero_division=np.nan)))
        for c, r in zip(categories, card.recall):
            assert r == pytest.approx(recalls[c], abs=1e-12, nan_ok=True)
        assert card.shift == pytest.approx(float(np.mean(np.subtract(j, h))), abs=1e-12)


def test_the_judge_with_grade_5_is_named_out_of_scale(llmjudge):
    _, _, report = llmjudge
    flagged = {card.judge: dict(card.out_of_scale) for card in report.cards if card.out_of_scale}
    assert list(flagged) == ["RMITIR-llama70B"] and set(flagged["RMITIR-llama70B"]) == {5}
    card = report["RMITIR-llama70B"]
    assert 5 in card.agreement.categories  # its own column, not dropped
    assert card.agreement.shared_pairs == 4423
    text = report.table("markdown")
    assert "RMITIR-llama70B gives grades outside human's scale" in text
    assert report.to_dict()["judges"][[c.judge for c in report.cards].index("RMITIR-llama70B")][
        "out_of_scale_grades"] == {"5": flagged["RMITIR-llama70B"][5]}


def test_judges_are_ranked_by_quadratic_kappa_without_runs(llmjudge):
    _, _, report = llmjudge
    kappas = [card.quadratic_kappa for card in report.cards]
    assert kappas == sorted(kappas, reverse=True)
    assert max(card.kappa for card in report.cards) == pytest.approx(0.29, abs=0.01)  # the README's best kappa


def test_with_runs_the_system_orders_equal_the_ranking_agreement_and_rank_the_judges():
    """Systems scored under the humans and under each judge: tau and tau_AP are ranking_agreement's; judges ranked
    by tau_AP."""
    from evalbridge.evalsets.ranking_agreement import ranking_agreement

    rng = np.random.default_rng(5)
    docs = [f"d{i}" for i in range(30)]
    human = {f"q{q}": {d: int(rng.integers(0, 4)) for d in docs} for q in range(12)}
    good = {q: {d: min(3, g + int(rng.random() < 0.1)) for d, g in row.items()} for q, row in human.items()}
    bad = {q: {d: int(rng.integers(0, 4)) for d in row} for q, row in human.items()}
    runs = {f"s{s}": {q: {d: float(human[q][d] * s + rng.normal()) for d in docs} for q in human} for s in range(5)}
    report = judges(human, {"bad": bad, "good": good}, runs, metrics=["nDCG@10"], test="t")
    assert [c.judge for c in report.cards] == ["good", "bad"]
    under_h = {n: eb.evaluate(human, r, ["nDCG@10"]) for n, r in runs.items()}
    for name, labels in (("good", good), ("bad", bad)):
        under_j = {n: eb.evaluate(labels, r, ["nDCG@10"]) for n, r in runs.items()}
        expected = ranking_agreement(under_h, under_j, metrics=["nDCG@10"], names=("human", name)).rows[0]
        order = report[name].orders[0]
        assert (order.kendall_tau, order.tau_ap, order.flipped) == (expected.kendall_tau, expected.tau_ap,
                                                                     expected.flipped)
        assert order.means_a == expected.means_a and order.means_b == expected.means_b
    for fmt in ("terminal", "markdown", "html", "latex"):
        assert "tau_AP" in report.table(fmt)
    json.loads(report.table("json"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=2, max_size=60))
def test_kappas_equal_scikit_learn_on_any_labels(pairs):
    from sklearn.metrics import cohen_kappa_score

    human = {"q": {f"d{i}": h for i, (h, _) in enumerate(pairs)}}
    judge = {"q": {f"d{i}": j for i, (_, j) in enumerate(pairs)}}
    h, j = [p[0] for p in pairs], [p[1] for p in pairs]
    if len(set(h) | set(j)) < 2:
        return
    card = judges(human, {"j": judge}).cards[0]
    labels = list(card.agreement.categories)
    for weights, ours in ((None, card.kappa), ("linear", card.linear_kappa), ("quadratic", card.quadratic_kappa)):
        theirs = cohen_kappa_score(h, j, labels=labels, weights=weights)
        assert ours == pytest.approx(theirs, abs=1e-9, nan_ok=True)
    assert sum(card.out_of_scale.values()) == sum(g not in set(h) for g in j)


def test_scores_need_thresholds_and_get_a_calibration_curve():
    human = {"q": {f"d{i}": i % 4 for i in range(40)}}
    scores = {"q": {f"d{i}": (i % 4) / 3 + 0.01 * (i % 3) for i in range(40)}}
    with pytest.raises(InputError, match="bins="):
        judges(human, {"probs": scores})
    card = judges(human, {"probs": scores}, bins={"probs": [0.2, 0.5, 0.8]}, calibration_bins=4).cards[0]
    assert card.kappa == pytest.approx(1.0)
    assert [row[1] for row in card.calibration] == [10, 10, 10, 10]
    assert [row[3] for row in card.calibration] == [0, 1, 2, 3]  # the humans' mean grade rises with the score


def test_cli_equals_the_api_and_bad_input_exits_2(shared, tmp_path, llmjudge):
    human_path, labels, report = llmjudge
    chosen = {name: labels[name] for name in ("RMITIR-llama70B", "Olz-gpt4o")}
    cli = subprocess.run([sys.executable, "-m", "evalbridge", "judges", str(human_path),
                          *[f"{n}={p}" for n, p in chosen.items()], "--format", "json"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    out = json.loads(cli.stdout)
    for card in out["judges"]:
        assert card["kappa"] == pytest.approx(report[card["judge"]].kappa, abs=1e-12)
        assert card["quadratic_kappa"] == pytest.approx(report[card["judge"]].quadratic_kappa, abs=1e-12)
    bad = tmp_path / "dup.qrels"
    bad.write_text("q1 0 d1 1\nq1 0 d1 2\n")
    failed = subprocess.run([sys.executable, "-m", "evalbridge", "judges", str(human_path), f"dup={bad}"],
                            capture_output=True, text=True)
    assert failed.returncode == 2 and "dup.qrels:2" in failed.stderr and "Traceback" not in failed.stderr


def _judged_collection(folder, rng, *, docs, queries, judge, label):
    """``human.txt`` (grades 0-3 drawn from ``rng``), ``JUDGE.txt`` (``label(grade)`` of every pair, in order) and
    three runs ``s0.run``... scoring each pair by its grade times the system's number plus noise, in ``folder``."""
    names = [f"d{i}" for i in range(docs)]
    human = {f"q{q}": {d: int(rng.integers(0, 4)) for d in names} for q in range(queries)}
    labels = {q: {d: label(g) for d, g in row.items()} for q, row in human.items()}
    for name, data in (("human", human), (judge, labels)):
        (folder / f"{name}.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, row in data.items()
                                                    for d, g in row.items()))
    for s in range(3):
        (folder / f"s{s}.run").write_text("".join(f"{q} Q0 {d} 1 {g * s + rng.random() * 3:.6f} s{s}\n"
                                                  for q, row in human.items() for d, g in row.items()))


def test_a_judges_section_gives_eb_judges_numbers_in_every_format(tmp_path, monkeypatch):
    """A config's judges: section (the config's qrels the humans) gives the API's report, in JSON and every text
    format; a bad key is refused with the key and exit 2."""
    rng = np.random.default_rng(2)
    _judged_collection(tmp_path, rng, docs=12, queries=10, judge="judge",
                       label=lambda g: min(3, max(0, g + int(rng.integers(-1, 2)))))
    monkeypatch.chdir(tmp_path)
    runs = {f"s{s}": f"s{s}.run" for s in range(3)}
    config = {"qrels": "human.txt", "runs": runs, "metrics": ["nDCG@5"], "judges": {"labels": {"llm": "judge.txt"}}}
    (tmp_path / "eval.yaml").write_text(json.dumps(config))
    api = judges("human.txt", {"llm": "judge.txt"}, runs, ["nDCG@5"])
    out = subprocess.run([sys.executable, "-m", "evalbridge", "run", "eval.yaml", "--no-write", "--format", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["judges"] == json.loads(json.dumps(api.to_dict()))
    for fmt in ("terminal", "markdown", "latex", "html"):
        shown = subprocess.run([sys.executable, "-m", "evalbridge", "run", "eval.yaml", "--no-write", "--format", fmt],
                               capture_output=True, text=True)
        assert shown.returncode == 0 and "llm" in shown.stdout and "tau_AP" in shown.stdout, shown.stderr
    config["judges"] = {"labels": {"llm": "judge.txt"}, "calibration_bins": 0}
    (tmp_path / "eval.yaml").write_text(json.dumps(config))
    bad = subprocess.run([sys.executable, "-m", "evalbridge", "run", "eval.yaml", "--no-write"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "judges.calibration_bins" in bad.stderr and "Fix" in bad.stderr, bad.stderr


def test_a_score_judge_gets_its_bins_at_every_door_and_the_flips_one_statistics(tmp_path, monkeypatch):
    """A judge giving scores: bins={name: thresholds} (API), --bins NAME=T1,T2 (CLI) and judges: {bins: {name: ...}}
    (a config) give one report card; the flips' test is one Statistics (statistics= equals its loose keywords); bad
    bins are refused naming the judge (the config: its key, exit 2)."""
    rng = np.random.default_rng(4)
    _judged_collection(tmp_path, rng, docs=15, queries=8, judge="scores",
                       label=lambda g: round(min(1.0, max(0.0, g / 3 + float(rng.normal(0, 0.15)))), 4))
    monkeypatch.chdir(tmp_path)
    runs = {f"s{s}": f"s{s}.run" for s in range(3)}
    bins = {"llm": [0.2, 0.5, 0.8]}
    api = judges("human.txt", {"llm": "scores.txt"}, runs, ["nDCG@5"], bins=bins, calibration_bins=5,
                 statistics=eb.Statistics(test="randomization", n_resamples=500, seed=2))
    assert api.to_dict() == judges("human.txt", {"llm": "scores.txt"}, runs, ["nDCG@5"], bins=bins,
                                   calibration_bins=5, test="randomization", n_resamples=500, seed=2).to_dict()
    assert api.test == "randomization" and len(api.cards[0].calibration) == 5
    cli = subprocess.run([sys.executable, "-m", "evalbridge", "judges", "human.txt", "llm=scores.txt", "--runs",
                          *runs.values(), "-m", "nDCG@5", "--bins", "llm=0.2,0.5,0.8", "--calibration-bins", "5",
                          "--test", "randomization", "--n-resamples", "500", "--seed", "2", "--format", "json"],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == json.loads(json.dumps(api.to_dict()))
    config = {"qrels": "human.txt", "runs": runs, "metrics": ["nDCG@5"], "seed": 2,
              "judges": {"labels": {"llm": "scores.txt"}, "bins": bins, "calibration_bins": 5,
                         "test": "randomization", "n_resamples": 500}}
    (tmp_path / "eval.yaml").write_text(json.dumps(config))
    out = subprocess.run([sys.executable, "-m", "evalbridge", "run", "eval.yaml", "--no-write", "--format", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["judges"] == json.loads(json.dumps(api.to_dict()))
    with pytest.raises(InputError, match="no judge"):
        judges("human.txt", {"llm": "scores.txt"}, bins={"lm": [0.5]})
    config["judges"]["bins"] = {"llm": [0.8, 0.2]}
    (tmp_path / "eval.yaml").write_text(json.dumps(config))
    bad = subprocess.run([sys.executable, "-m", "evalbridge", "run", "eval.yaml", "--no-write"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "judges.bins.llm" in bad.stderr and "Fix" in bad.stderr, bad.stderr
    bad_cli = subprocess.run([sys.executable, "-m", "evalbridge", "judges", "human.txt", "llm=scores.txt", "--bins",
                              "llm=0.2,x"], capture_output=True, text=True)
    assert bad_cli.returncode == 2 and "--bins" in bad_cli.stderr and "Traceback" not in bad_cli.stderr


def noisy(labels: dict[str, dict[str, int]], rng: np.random.Generator, share: float) -> dict[str, dict[str, int]]:
    """``labels`` with a ``share`` of the pairs moved one grade up or down (within 0-3): a re-run of the same judge."""
    return {q: {d: min(3, max(0, g + int(rng.choice([-1, 1])))) if rng.random() < share else g
                for d, g in row.items()} for q, row in labels.items()}


def test_a_judge_run_several_times_gives_its_label_noise_through_uncertain(tmp_path, monkeypatch):
    """reruns={name: [...]}: per-pair disagreement and kappa between the label sets (scikit-learn's kappa, averaged
    over every two sets), and each system's metric with the noise in its interval equal to eb.uncertain over the
    label sets; identical re-runs add no noise; the CLI (--reruns) and a config (reruns:) give the API's card."""
    from itertools import combinations

    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(8)
    docs = [f"d{i}" for i in range(20)]
    human = {f"q{q}": {d: int(rng.integers(0, 4)) for d in docs} for q in range(12)}
    first = noisy(human, rng, 0.4)
    sets = [first, noisy(first, rng, 0.3), noisy(first, rng, 0.3)]
    runs = {f"s{s}": {q: {d: g * s + float(rng.random()) * 3 for d, g in row.items()} for q, row in human.items()}
            for s in range(3)}
    stats = eb.Statistics(n_resamples=300, seed=1)
    report = judges(human, {"llm": sets[0]}, runs, ["P(rel=2)@5", "nDCG@5"], reruns={"llm": sets[1:]},
                    statistics=stats)
    noise = report["llm"].noise
    pairs = [(q, d) for q in human for d in docs]
    assert noise.labellings == 3 and noise.pairs == len(pairs)
    assert noise.disagreement == pytest.approx(sum(len({s[q][d] for s in sets}) > 1 for q, d in pairs) / len(pairs))
    theirs = [cohen_kappa_score([a[q][d] for q, d in pairs], [b[q][d] for q, d in pairs]) for a, b in
              combinations(sets, 2)]
    assert noise.kappa == pytest.approx(float(np.mean(theirs)), abs=1e-9)
    assert [(u.system, u.metric) for u in noise.intervals] == [(s, m) for s in runs for m in ("P(rel=2)@5", "nDCG@5")]
    named = {f"llm #{i + 1}": labels for i, labels in enumerate(sets)}
    for u in noise.intervals:
        alone = eb.uncertain(runs[u.system], u.metric, judges=named, system=u.system, statistics=stats)
        assert (u.expected, u.ci_low, u.ci_high) == (alone.expected, alone.ci_low, alone.ci_high)
        assert u.ci_high - u.ci_low >= u.query_ci_high - u.query_ci_low - 1e-12
    same = judges(human, {"llm": sets[0]}, runs, ["nDCG@5"], reruns={"llm": [sets[0]]}, statistics=stats)
    assert same["llm"].noise.disagreement == 0 and same["llm"].noise.kappa == pytest.approx(1)
    assert all(u.widening == pytest.approx(1) for u in same["llm"].noise.intervals)
    assert "label noise over 3 label sets" in report.table("markdown")
    with pytest.raises(InputError, match="reruns"):
        judges(human, {"llm": sets[0]}, reruns={"lm": sets[1:]})
    monkeypatch.chdir(tmp_path)
    for name, data in (("human", human), *((f"llm{i}", s) for i, s in enumerate(sets))):
        (tmp_path / f"{name}.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, row in data.items()
                                                      for d, g in row.items()))
    for name, run in runs.items():
        (tmp_path / f"{name}.run").write_text("".join(f"{q} Q0 {d} 1 {v:.6f} {name}\n" for q, row in run.items()
                                                      for d, v in row.items()))
    paths = {name: f"{name}.run" for name in runs}
    api = judges("human.txt", {"llm": "llm0.txt"}, paths, ["nDCG@5"], reruns={"llm": ["llm1.txt", "llm2.txt"]},
                 statistics=eb.Statistics(n_resamples=300, seed=1))
    cli = subprocess.run([sys.executable, "-m", "evalbridge", "judges", "human.txt", "llm=llm0.txt", "--runs",
                          *paths.values(), "-m", "nDCG@5", "--reruns", "llm=llm1.txt", "llm=llm2.txt",
                          "--n-resamples", "300", "--seed", "1", "--format", "json"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == json.loads(json.dumps(api.to_dict()))
    config = {"qrels": "human.txt", "runs": paths, "metrics": ["nDCG@5"], "seed": 1,
              "judges": {"labels": {"llm": "llm0.txt"}, "reruns": {"llm": ["llm1.txt", "llm2.txt"]},
                         "n_resamples": 300}}
    (tmp_path / "eval.yaml").write_text(json.dumps(config))
    out = subprocess.run([sys.executable, "-m", "evalbridge", "run", "eval.yaml", "--no-write", "--format", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["judges"] == json.loads(json.dumps(api.to_dict()))
    config["judges"]["reruns"] = {"lm": ["llm1.txt"]}
    (tmp_path / "eval.yaml").write_text(json.dumps(config))
    bad = subprocess.run([sys.executable, "-m", "evalbridge", "run", "eval.yaml", "--no-write"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "judges.reruns.lm" in bad.stderr and "Fix" in bad.stderr, bad.stderr


def test_the_worked_example_of_eval_sets_md_prints_what_the_page_shows(shared, tmp_path):
    """docs/eval_sets.md's LLMJudge example (users fetch the public data; it is not redistributed here) run on the
    shared copy prints the output the page shows, number for number."""
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from test_docs import blocks
    finally:
        sys.path.pop(0)
    page = blocks(Path(__file__).resolve().parents[1] / "docs" / "eval_sets.md")
    at = next(i for i, b in enumerate(page) if "llmjudge" in b.info)
    code, shown = page[at].code, page[at + 1]
    assert shown.language == "text"
    (tmp_path / "llmjudge").symlink_to(shared / LLMJUDGE)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [line.split() for line in out.stdout.splitlines()] == [line.split() for line in shown.code.splitlines()]


def test_the_three_doors_agree_without_runs_and_with_runs_reruns_and_bins(tmp_path, monkeypatch):
    """evalbridge judges HUMAN NAME=LABELS... is a config whose qrels are HUMAN and whose judges: section holds the
    labels: without --runs a config of qrels: and judges: alone (no runs, no metrics) and eb.judges(human, labels)
    give the same report; with --runs, --reruns NAME=PATH (repeated) and --bins NAME=T1,T2 the config's runs:,
    judges: {reruns, bins} and the API's keywords do too, in JSON and as text."""
    rng = np.random.default_rng(5)
    _judged_collection(tmp_path, rng, docs=10, queries=8, judge="judge",
                       label=lambda g: min(3, max(0, g + int(rng.integers(-1, 2)))))
    (tmp_path / "again.txt").write_text((tmp_path / "judge.txt").read_text().replace(" 3\n", " 2\n"))  # a re-run
    (tmp_path / "scores.txt").write_text("".join(f"{q} 0 {d} {int(g) / 3:.3f}\n" for q, _, d, g in
                                                 (line.split() for line in (tmp_path / "human.txt").read_text()
                                                  .splitlines())))
    monkeypatch.chdir(tmp_path)

    def shown(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "evalbridge", *args], capture_output=True, text=True)

    def configured(config: dict, fmt: str = "json") -> str:
        (tmp_path / "eval.yaml").write_text(json.dumps(config))
        done = shown("run", "eval.yaml", "--no-write", "--format", fmt)
        assert done.returncode == 0, done.stderr
        return done.stdout

    alone = shown("judges", "human.txt", "llm=judge.txt", "scores.txt", "--bins", "scores=0.2,0.5,0.8",
                  "--format", "json")
    assert alone.returncode == 0, alone.stderr
    api = judges("human.txt", {"llm": "judge.txt", "scores": "scores.txt"}, bins={"scores": [0.2, 0.5, 0.8]})
    section = {"labels": {"llm": "judge.txt", "scores": "scores.txt"}, "bins": {"scores": [0.2, 0.5, 0.8]}}
    assert json.loads(alone.stdout) == json.loads(json.dumps(api.to_dict())) \
        == json.loads(configured({"qrels": "human.txt", "judges": section}))["judges"]
    runs = {f"s{s}": f"s{s}.run" for s in range(3)}
    flags = ["human.txt", "llm=judge.txt", "--runs", *runs.values(), "--reruns", "llm=again.txt", "llm=human.txt",
             "-m", "nDCG@5", "P@5", "--n-resamples", "200", "--seed", "4"]
    api = judges("human.txt", {"llm": "judge.txt"}, runs, ["nDCG@5", "P@5"],
                 reruns={"llm": ["again.txt", "human.txt"]}, n_resamples=200, seed=4)
    config = {"qrels": "human.txt", "runs": runs, "metrics": ["nDCG@5", "P@5"], "seed": 4,
              "judges": {"labels": {"llm": "judge.txt"}, "reruns": {"llm": ["again.txt", "human.txt"]},
                         "n_resamples": 200}}
    by_cli = shown("judges", *flags, "--format", "json")
    assert by_cli.returncode == 0, by_cli.stderr
    assert json.loads(by_cli.stdout) == json.loads(json.dumps(api.to_dict())) \
        == json.loads(configured(config))["judges"]
    text = shown("judges", *flags)
    assert text.returncode == 0 and text.stdout == api.table("terminal"), text.stderr
