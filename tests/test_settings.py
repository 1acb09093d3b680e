"""Every setting of ``evalbridge.Settings`` reaches the numbers through every verb and every door.

One table (:data:`CASES`): a setting, a value that changes the result, and inputs where it does. Each case is
evaluated with ``evaluate`` at the value and at the default (they must differ, or the default refuses), then
through every verb (``evaluate``, ``compare``, ``crosscheck``, ``agree``, ``diff``) and every door (Python keywords,
a ``Settings`` value, the command line's flag, the config's key): each must give ``evaluate``'s numbers at the value.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

import evalbridge as eb
from doors import cli
from evalbridge.model.settings import DEFAULTS, ROWS, Keywords, Settings

METRICS = ("P@1", "P@2", "RR", "R@2")
#: q1: an unjudged document first, then d1 (relevant) and d3 (not) tied, d2 (grade 2) last; q2: d4 (relevant) 1e-10
#: above d9 (a tie in float32); q3: nothing relevant; q4: absent from run a.
QRELS = "q1 0 d1 1\nq1 0 d2 2\nq1 0 d3 0\nq2 0 d4 1\nq3 0 d5 0\nq4 0 d6 1\n"
RUN_A = ("q1 Q0 dX 1 3.0 a\nq1 Q0 d1 2 2.0 a\nq1 Q0 d3 3 2.0 a\nq1 Q0 d2 4 1.0 a\n"
         "q2 Q0 d4 1 1.0000000001 a\nq2 Q0 d9 2 1.0 a\nq3 Q0 d5 1 1.0 a\n")
RUN_B = "q1 Q0 d2 1 3.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d9 1 2.0 b\nq2 Q0 d4 2 1.0 b\nq3 Q0 d5 1 1.0 b\nq4 Q0 d6 1 1.0 b\n"
TREC = {"qrels.txt": QRELS, "a.run": RUN_A, "b.run": RUN_B}
#: int ids in the qrels (JSON numbers), str ids in the runs: they meet only under ids='str'
INT_IDS = {"qrels.jsonl": '{"query_id": 1, "doc_id": 7, "relevance": 1}\n{"query_id": 2, "doc_id": 8, "relevance": 1}\n',
           "a.run": "1 Q0 9 1 2.0 a\n1 Q0 7 2 1.0 a\n2 Q0 8 1 1.0 a\n",
           "b.run": "1 Q0 7 1 2.0 b\n2 Q0 9 1 1.0 b\n"}
#: a document retrieved twice in a CSV run: refused, or kept at its first line under duplicates='first'
REPEATED = {"qrels.txt": "q1 0 d2 1\nq2 0 d1 1\n",
            "a.csv": "query_id,doc_id,score\nq1,d1,2.0\nq1,d2,1.0\nq1,d1,0.5\nq2,d1,1.0\n",
            "b.csv": "query_id,doc_id,score\nq1,d2,2.0\nq2,d3,1.0\nq2,d1,0.5\n"}


@dataclasses.dataclass(frozen=True)
class SettingCase:
    """A setting, a value that changes the numbers, the inputs where it does (qrels file, runs a and b)."""

    name: str
    value: Any
    files: Mapping[str, str] = dataclasses.field(default_factory=lambda: TREC)
    qrels: str = "qrels.txt"
    runs: tuple[str, str] = ("a.run", "b.run")

    @property
    def keywords(self) -> Keywords:
        return {self.name: self.value}  # type: ignore[misc,return-value]  # (a key of Keywords)

    def __str__(self) -> str:
        return f"{self.name}={self.value!r}"


CASES = (
    SettingCase("backend", "fast"),
    SettingCase("min_relevance", 2),
    SettingCase("ties", "docid_asc"),
    SettingCase("score_precision", "float32"),
    SettingCase("missing_queries", "drop"),
    SettingCase("judged_only", True),
    SettingCase("depth", 1),
    SettingCase("no_relevant", "drop"),
    SettingCase("ids", "str", INT_IDS, "qrels.jsonl"),
    SettingCase("duplicates", "first", REPEATED, runs=("a.csv", "b.csv")),
)


def test_the_table_covers_every_setting_and_keywords_match_the_fields() -> None:
    """A new setting is one field of Settings (its row) and its line in Keywords; this table has a case for each."""
    assert [c.name for c in CASES] == list(ROWS) == list(Keywords.__annotations__)
    assert all(c.value != DEFAULTS[c.name] for c in CASES)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _write(case: SettingCase, folder: Path) -> None:
    for name, text in case.files.items():
        (folder / name).write_text(text, encoding="utf-8")


def _means(results: Any) -> dict[str, float]:
    return {label: float(value) for label, value in results.means.items()}


def _reached(case: SettingCase, got: Any) -> Any:
    """What the setting changes: the backend the provenance names, else the means."""
    return got.provenance.backend if case.name == "backend" else _means(got)


# every verb, as (qrels, runs, options) -> what evaluate(qrels, run a) gives: the means of system a (or the backend)
def _evaluate(case: SettingCase, qrels: str, runs: dict[str, str], options: dict[str, Any]) -> Any:
    return _reached(case, eb.evaluate(qrels, runs["a"], METRICS, **options))


def _compare(case: SettingCase, qrels: str, runs: dict[str, str], options: dict[str, Any]) -> Any:
    comparison = eb.compare(qrels, runs, METRICS, baseline="b", n_resamples=200, **options)
    if case.name == "backend":
        return None  # a comparison shows means; the backend's numbers are the same (checked by the others)
    return {row.metric: row.system_mean for row in comparison.rows if row.system == "a"}


def _crosscheck(case: SettingCase, qrels: str, runs: dict[str, str], options: dict[str, Any]) -> Any:
    check = eb.crosscheck(qrels, runs["a"], METRICS, backends=[], **options)
    if case.name == "backend":
        return check.reference_backend
    return {label: math.fsum(check.query(label).values()) / len(check.query(label)) for label in METRICS}


def _agree(case: SettingCase, qrels: str, runs: dict[str, str], options: dict[str, Any]) -> Any:
    agreement = eb.agree(qrels, qrels, runs, METRICS, **options)
    return _reached(case, agreement.results_a["a"])


VERBS: dict[str, Callable[[SettingCase, str, dict[str, str], dict[str, Any]], Any]] = {
    "evaluate": _evaluate, "compare": _compare, "crosscheck": _crosscheck, "agree": _agree,
}


def _close(got: Any, want: Any) -> bool:
    if isinstance(want, dict):
        return got.keys() == want.keys() and all(math.isclose(got[k], v, rel_tol=1e-12, abs_tol=1e-15)
                                                 for k, v in want.items())
    return bool(got == want)


def _expected(case: SettingCase) -> Any:
    """``evaluate``'s numbers at the value, checked to differ from the default's (or the default refuses)."""
    runs = {"a": case.runs[0], "b": case.runs[1]}
    want = _evaluate(case, case.qrels, runs, case.keywords)
    try:
        default = _evaluate(case, case.qrels, runs, {})
    except eb.InputError:
        return want  # the default refuses these inputs (ids that never meet, a repeated document)
    assert not _close(default, want), f"{case} changes nothing here: {default}"
    return want


@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_setting_given_as_keyword_or_settings_value_reaches_every_verbs_numbers(
        case: SettingCase, verb: str, folder: Path) -> None:
    _write(case, folder)
    want = _expected(case)
    runs = {"a": case.runs[0], "b": case.runs[1]}
    if verb == "crosscheck" and case.name == "backend":
        want = "fast"
    for options in (case.keywords, {"settings": Settings(**case.keywords)}):
        got = VERBS[verb](case, case.qrels, runs, dict(options))
        assert got is None or _close(got, want), (verb, options, got, want)


def _cli_means(argv: list[str], case: SettingCase) -> Any:
    code, out, err = cli(*argv)
    assert code == 0, err
    report = json.loads(out)
    if case.name == "backend":
        return next(iter(report["provenance"]["backend_versions"]))
    return {label: float(v) for label, v in report["systems"]["a"]["metrics"].items()}


def _flag(case: SettingCase) -> list[str]:
    row = ROWS[case.name]
    return [row.flag] if case.value is True else [row.flag, str(case.value)]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_setting_given_as_flag_or_config_key_reaches_the_pipelines_numbers(case: SettingCase, folder: Path) -> None:
    """The same numbers from ``evalbridge eval ... --flag value`` and from a config's ``key: value``, with a
    comparison and a cross-check in the same run (the pipeline passes the one Settings to each)."""
    _write(case, folder)
    want = _expected(case)
    metrics = ["-m", *METRICS]
    assert _close(_cli_means(["eval", case.qrels, *case.runs, *metrics, "--format", "json", *_flag(case)], case), want)
    config = {"qrels": case.qrels, "runs": {"a": case.runs[0], "b": case.runs[1]}, "metrics": list(METRICS),
              case.name: case.value, "comparison": {"baseline": "b", "n_resamples": 200},
              **({"crosscheck": {"backends": []}} if case.name != "backend" else {})}
    (folder / "eval.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    assert _close(_cli_means(["run", "eval.yaml", "--no-write", "--format", "json"], case), want)


def test_keywords_beside_a_settings_value_replace_its_fields_and_unknown_ones_are_refused() -> None:
    qrels, run = {"q": {"a": 1}}, {"q": {"x": 2.0, "a": 1.0}}
    base = Settings(depth=1)
    assert eb.evaluate(qrels, run, "P@2", settings=base)["P@2"] == 0.0
    assert eb.evaluate(qrels, run, "P@2", settings=base, depth=2)["P@2"] == 0.5
    with pytest.raises(eb.InputError, match="unknown setting 'tie'.*did you mean 'ties'"):
        eb.evaluate(qrels, run, "P@2", tie="docid_asc")  # type: ignore[call-arg]


@pytest.mark.parametrize("name, bad, says", [
    ("ties", "random", "ties must be one of 'docid_desc', 'docid_asc', 'input', 'average'; got 'random'"),
    ("depth", 0, "depth must be an integer >= 1; got 0"),
    ("judged_only", "yes", "judged_only must be True or False; got 'yes'"),
    ("min_relevance", float("nan"), "min_relevance must be a finite number; got nan"),
    ("duplicates", "last", "duplicates must be one of 'error', 'first'; got 'last'"),
])
def test_a_bad_value_is_refused_by_its_rule_saying_expected_and_got(name: str, bad: Any, says: str) -> None:
    with pytest.raises(eb.InputError, match=says.replace("(", r"\(").replace("[", r"\[")):
        Settings(**{name: bad})


#: What Spark refuses, with the fix (a DataFrame's rows have no order; the buckets use the fast backend)
SPARK_REFUSES = {"backend": "computes in memory", "no_relevant": "not applied by the Spark engine",
                 "duplicates": "rows have no order"}


def _frames(spark: Any, case: SettingCase) -> tuple[Any, Any]:
    """The case's qrels and run a as Spark DataFrames, ids as the files hold them (ints stay ints)."""
    qrels_rows = [(q, d, g) for q, docs in eb.read_qrels(case.qrels).items() for d, g in docs.items()]
    if case.name == "ids":  # the JSON qrels hold int ids: keep them ints, against the run's str ids
        qrels_rows = [(int(q), int(d), g) for q, d, g in qrels_rows]
    run = eb.read_run(case.runs[0], **({"duplicates": "first"} if case.name == "duplicates" else {}))
    run_rows = [(q, d, float(s)) for q, docs in run.items() for d, s in docs.items()]
    return (spark.createDataFrame(qrels_rows, ["query_id", "doc_id", "relevance"]),
            spark.createDataFrame(run_rows, ["query_id", "doc_id", "score"]))


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_setting_reaches_the_spark_engines_numbers_or_is_refused_with_the_fix(
        case: SettingCase, folder: Path, spark: Any) -> None:
    """evalbridge.spark.evaluate takes every setting evaluate takes (keywords or a Settings value): the same means,
    or a refusal that says why and the fix for what the engine does not apply."""
    import evalbridge.spark as es

    _write(case, folder)
    qrels, run = _frames(spark, case)
    for options in (case.keywords, {"settings": Settings(**case.keywords)}):
        if case.name in SPARK_REFUSES:
            with pytest.raises(eb.InputError, match=SPARK_REFUSES[case.name]):
                es.evaluate(qrels, run, METRICS, **options)  # type: ignore[arg-type]
            continue
        with es.evaluate(qrels, run, METRICS, **options) as got:  # type: ignore[arg-type]
            assert _close(got.means, _expected(case)), (options, got.means)
