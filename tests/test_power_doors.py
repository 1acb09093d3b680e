"""Power through every door: eb.power, a config's power: section and ``evalbridge power`` give the same numbers,
those of statsmodels' TTestPower for the t-test, and refuse the same bad values with the same rule."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import evalbridge as eb
from doors import cli, write_collection
from evalbridge.errors import InputError
from evalbridge.views.formats import render

TTestPower = pytest.importorskip("statsmodels.stats.power", reason="statsmodels is the test oracle "
                                 "(pip install 'evalbridge[test]')").TTestPower
ALTERNATIVE = {2: "two-sided", 1: "larger"}
METRICS = ["nDCG@5", "P@3"]
RUNS = ("base", "new", "other")


def _files(folder: Path) -> Path:
    """40 queries of 8 graded documents, three runs ranking 5 of them at random (fixed seed)."""
    return write_collection(folder, RUNS, queries=40, docs=8, ranked=5, seed=7)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _files(tmp_path_factory.mktemp("power"))


def _api(folder: Path, **options: object) -> dict:
    results = {name: eb.evaluate(folder / "qrels.txt", folder / f"{name}.run", METRICS) for name in RUNS}
    return eb.power(results, METRICS, baseline="base", **options).to_dict()


def _config(folder: Path, power: object, comparison: object = None, name: str = "eval.yaml") -> dict | None:
    config = {"qrels": "qrels.txt", "runs": {n: f"{n}.run" for n in RUNS}, "metrics": METRICS, "power": power}
    if comparison is not None:
        config["comparison"] = comparison
    (folder / name).write_text(json.dumps(config))
    report = json.loads(render(eb.run_config(eb.load_config(folder / name), write=False).report, "json"))
    return report.get("power")


def _cli(folder: Path, *flags: str) -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        return cli("power", "qrels.txt", *(f"{n}.run" for n in RUNS), "-m", *METRICS, "--format", "json", *flags)


def _flags(options: dict) -> list[str]:
    return [text for key, value in options.items() if value is not None for text in (f"--{key}", str(value))]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hs.sampled_from(["t", "randomization"]), hs.sampled_from([0.01, 0.05, 0.1]), hs.sampled_from([0.5, 0.8, 0.9]),
       hs.one_of(hs.none(), hs.floats(0.005, 0.5)), hs.sampled_from([1, 2]))
def test_the_three_doors_give_the_same_numbers(folder, test, alpha, power, effect, sides) -> None:  # noqa: ANN001
    """Property: for any options, the API's analysis, the config report's power section and the command's JSON are
    equal, number for number (the options given at each door as that door spells them)."""
    options = {"test": test, "alpha": alpha, "power": power, "effect": effect, "sides": sides}
    api = _api(folder, **options)
    config = _config(folder, {k: v for k, v in options.items() if v is not None})
    code, out, err = _cli(folder, *_flags(options))
    assert code == 0, err
    assert api == config == json.loads(out)
    assert [(r["metric"], r["system"], r["baseline"]) for r in api["rows"]] == [
        (m, s, "base") for m in METRICS for s in ("new", "other")]


def test_the_command_and_config_numbers_are_statsmodels(folder: Path) -> None:
    """Golden values from the oracle: each row's power at the target, its detectable effect and its queries needed
    are statsmodels' TTestPower.power / solve_power on the row's standardised effect, one- and two-sided."""
    for sides, alpha, power in ((2, 0.05, 0.8), (1, 0.01, 0.9)):
        code, out, err = _cli(folder, "--effect", "0.08", "--sides", str(sides), "--alpha", str(alpha), "--power",
                              str(power))
        assert code == 0, err
        rows = json.loads(out)["rows"]
        assert rows == _config(folder, {"effect": 0.08, "sides": sides, "alpha": alpha, "power": power})["rows"]
        oracle, alternative = TTestPower(), ALTERNATIVE[sides]
        for r in rows:
            assert r["n"] == 40 and r["effect"] == 0.08 and r["sd"] > 0
            assert r["power_at_effect"] == pytest.approx(oracle.power(0.08 / r["sd"], 40, alpha, alternative=alternative),
                                                         abs=1e-12)
            mde = oracle.solve_power(nobs=40, alpha=alpha, power=power, alternative=alternative)
            assert r["mde"] / r["sd"] == pytest.approx(mde, rel=1e-4)
            needed = oracle.solve_power(0.08 / r["sd"], alpha=alpha, power=power, alternative=alternative)
            assert r["queries_needed"] == math.ceil(needed)


def test_a_comparison_report_has_power_at_its_test_and_alpha_unless_told(folder: Path) -> None:
    """Left out, power follows the comparison (the t-test's for Wilcoxon, named so); power: false leaves it out;
    power: without a comparison compares with the first run; the keys given override the comparison's."""
    comparison = {"baseline": "base", "test": "randomization", "alpha": 0.01, "n_resamples": 100}
    assert _config(folder, None, comparison) == _api(folder, test="randomization", alpha=0.01)
    assert _config(folder, None, {**comparison, "test": "wilcoxon"}) == _api(folder, alpha=0.01)
    assert _config(folder, False, comparison) is None
    assert _config(folder, None) is None
    assert _config(folder, True) == _api(folder)
    assert _config(folder, {"power": 0.9}, comparison) == _api(folder, test="randomization", alpha=0.01, power=0.9)


def test_bad_values_are_refused_alike(folder: Path) -> None:
    with pytest.raises(InputError, match=r"alpha must be a number in \(0, 1\); got 2"):
        _api(folder, alpha=2)
    with pytest.raises(InputError, match=r"eval.yaml:\d+: power.alpha must be a number in \(0, 1\); got 2"):
        _config(folder, {"alpha": 2})
    code, _, err = _cli(folder, "--alpha", "2")
    assert code == 2 and "--alpha must be a number in (0, 1); got 2" in err and "Traceback" not in err
    with pytest.raises(InputError, match=r"power.sides must be an integer in \[1, 2\]; got 3"):
        _config(folder, {"sides": 3})
    code, _, err = _cli(folder, "--sides", "3")
    assert code == 2 and "--sides must be an integer in [1, 2]; got 3" in err
    with pytest.raises(InputError, match=r"power.test must be one of 't', 'randomization'; got 'wilcoxon'"):
        _config(folder, {"test": "wilcoxon"})
    code, _, err = _cli(folder, "--test", "wilcoxon")
    assert code == 2 and "--test must be one of 't', 'randomization'; got 'wilcoxon'" in err and "Traceback" not in err
    with pytest.raises(InputError, match=r"power.effct: unknown key 'effct'.*did you mean 'effect'"):
        _config(folder, {"effct": 0.1})


def test_one_run_is_refused_naming_what_to_add(folder: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        code, out, err = cli("power", "qrels.txt", "base.run", "-m", "P@3")
    assert code == 2 and out == "" and "Traceback" not in err
    assert "BASELINE RUN...: power compares a system with the baseline, and needs at least two runs" in err
    (folder / "one.yaml").write_text("qrels: qrels.txt\nruns: {base: base.run}\nmetrics: [P@3]\npower: true\n")
    with pytest.raises(InputError, match=r"one.yaml:4: power: .*two runs.*remove the power section"):
        eb.load_config(folder / "one.yaml")


def test_every_table_format_writes_the_analysis(folder: Path) -> None:
    """The command writes each format that writes tables (the same table as print(analysis)), and -o a file."""
    for fmt in ("terminal", "markdown", "latex", "html"):
        code, out, err = cli_format(folder, fmt)
        assert code == 0, err
        assert "new" in out and "base" in out and "nDCG@5" in out
    code, out, err = cli_format(folder, "terminal", "-o", "power.txt")
    assert code == 0 and out == "" and "detectable" in (folder / "power.txt").read_text()


def cli_format(folder: Path, fmt: str, *flags: str) -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        return cli("power", "qrels.txt", "base.run", "new.run", "-m", *METRICS, "--format", fmt, *flags)


def test_power_and_check_gates_take_runs_with_their_qrels_as_compare_does() -> None:
    """Runs (here dicts, as evaluate reads them) with qrels= give the numbers of their evaluated Results, for
    power and for the gates alike."""
    import numpy as np

    rng = np.random.default_rng(3)
    qrels = {f"q{i}": {f"d{j}": int(rng.random() < 0.4) for j in range(10)} for i in range(30)}
    runs = {name: {q: {f"d{j}": float(rng.random() + bias * qrels[q][f"d{j}"]) for j in range(10)} for q in qrels}
            for name, bias in (("bm25", 0.0), ("dense", 0.5))}
    results = {name: eb.evaluate(qrels, run, ["nDCG@10", "P@5"]) for name, run in runs.items()}
    assert eb.power(runs, ["nDCG@10", "P@5"], baseline="bm25", qrels=qrels) == \
        eb.power(results, ["nDCG@10", "P@5"], baseline="bm25")
    gates = {"nDCG@10": ">= baseline - 0.01 at 95%", "P@5": ">= 0.2"}
    assert eb.check_gates(gates, runs, baseline="bm25", qrels=qrels) == eb.check_gates(gates, results, baseline="bm25")
