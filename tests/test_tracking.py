"""MLflow tracking: every door logs one parent run and one nested run per system to a real local store (SQLite in
tmp_path), read back with ``MlflowClient``: params, means equal to the Results', artifacts."""

from __future__ import annotations

import contextlib
import io
import json
import math
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

import evalbridge as eb
from evalbridge.cli import main
from evalbridge.tracking import tracked_runs, tracking_key

pytest.importorskip("mlflow", reason="the mlflow extra is not installed (make test installs it)")
from mlflow.tracking import MlflowClient  # noqa: E402

QRELS = "q1 0 d1 2\nq1 0 d2 1\nq2 0 d3 1\nq3 0 d5 2\nq3 0 d6 0\n"
RUNS = {"bm25": "q1 Q0 d2 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq2 Q0 d4 1 1.0 r\nq2 Q0 d3 2 0.5 r\nq3 Q0 d5 1 4.0 r\n",
        "dense": "q1 Q0 d1 1 0.9 r\nq2 Q0 d3 1 0.8 r\nq2 Q0 d4 2 0.1 r\nq3 Q0 d6 1 0.5 r\nq3 Q0 d5 2 0.4 r\n"}
METRICS = ["nDCG@10", "P@1", "AP", "RR"]


def _files(folder: Path, tracking: str = "") -> Path:
    (folder / "qrels.txt").write_text(QRELS)
    for name, text in RUNS.items():
        (folder / f"{name}.run").write_text(text)
    config = folder / "eval.yaml"
    config.write_text("title: dl-small\nqrels: qrels.txt\nruns: {bm25: bm25.run, dense: dense.run}\n"
                      f"metrics: [{', '.join(METRICS)}]\nmin_relevance: 1\n{tracking}")
    return config


def _uri(folder: Path) -> str:
    return f"sqlite:///{folder / 'mlflow.db'}"


def _read(uri: str, parent_id: str) -> dict:
    """Everything logged under a parent run, read back from the store."""
    client = MlflowClient(tracking_uri=uri)
    parent = client.get_run(parent_id)
    children = client.search_runs([parent.info.experiment_id],
                                  filter_string=f"tags.mlflow.parentRunId = '{parent_id}'")
    return {
        "parent": {"name": parent.info.run_name, "params": parent.data.params, "metrics": parent.data.metrics,
                   "status": parent.info.status, "files": sorted(a.path for a in client.list_artifacts(parent_id)),
                   "parent_tag": parent.data.tags.get("mlflow.parentRunId")},
        "systems": {run.info.run_name: {"params": run.data.params, "metrics": run.data.metrics, "id": run.info.run_id,
                                        "status": run.info.status,
                                        "files": sorted(a.path for a in client.list_artifacts(run.info.run_id))}
                    for run in children},
        "client": client,
    }


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_log_mlflow_nests_one_run_per_system_with_the_means_params_and_artifacts(tmp_path: Path) -> None:
    config = eb.load_config(_files(tmp_path))
    report = eb.run_config(config, write=False).report
    tracked = eb.log_mlflow(report, uri=_uri(tmp_path), experiment="retrieval", run_name="nightly")
    got = _read(_uri(tmp_path), tracked.parent)
    assert got["parent"]["name"] == "nightly" and got["parent"]["parent_tag"] is None
    assert got["parent"]["status"] == "FINISHED"
    assert got["parent"]["metrics"] == {f"mean.{system}.{tracking_key(label)}": mean
                                        for system, results in report.results.items()
                                        for label, mean in results.means.items()}
    assert set(got["systems"]) == {"bm25", "dense"} == set(tracked.runs)
    for system, results in report.results.items():
        run = got["systems"][system]
        assert run["id"] == tracked.runs[system] and run["status"] == "FINISHED"
        # the means exactly as evaluated, keyed by the label made a valid MLflow name
        assert run["metrics"] == {tracking_key(label): mean for label, mean in results.means.items()}
        assert run["params"]["system"] == system
        assert run["params"]["queries.evaluated"] == str(results.provenance.queries_evaluated)
        assert run["params"]["input.sha256"] == report.provenance["inputs"][f"runs.{system}"]["sha256"]
        assert run["files"] == ["per_query.csv"]
        table = Path(got["client"].download_artifacts(run["id"], "per_query.csv", str(tmp_path / system)))
        import pandas as pd

        frame = pd.read_csv(table, dtype={"query_id": str}).set_index("query_id")
        assert frame.to_dict() == results.per_query.to_dict()
    params = got["parent"]["params"]
    # the metrics as evaluated (min_relevance: 1 resolves P@1 to itself; the label says what was asked)
    assert params["metric.nDCG_at_10"] == "nDCG@10 = nDCG@10" and params["metric.P_at_1"].startswith("P@1 = P")
    assert params["evalbridge_version"] == eb.__version__
    assert params["backend_versions.reference"] and params["conventions.ties"] == "docid_desc"
    assert params["relevance_level"] == "1.0" and params["settings.min_relevance"] == "1.0"
    assert params["input.qrels.sha256"] == report.provenance["inputs"]["qrels"]["sha256"]
    assert got["parent"]["files"] == ["provenance.json", "report.html"]
    page = Path(got["client"].download_artifacts(tracked.parent, "report.html", str(tmp_path)))
    assert page.read_text(encoding="utf-8") == report.render("html")
    provenance = Path(got["client"].download_artifacts(tracked.parent, "provenance.json", str(tmp_path)))
    assert json.loads(provenance.read_text())["inputs"] == json.loads(json.dumps(report.provenance["inputs"]))
    # the artifacts sit beside the database, not in the working directory
    assert (tmp_path / "mlartifacts").is_dir()


def test_results_alone_are_logged_with_their_own_provenance(tmp_path: Path) -> None:
    qrels, run = eb.from_labels({"q1": [1, 0, 1], "q2": [0, 1, 0]})
    results = eb.evaluate(qrels, run, {"hit rate@3": "Success@3", "mrr": "RR"})
    tracked = eb.log_mlflow(results, uri=_uri(tmp_path))
    got = _read(_uri(tmp_path), tracked.parent)
    assert tracked.experiment == "evalbridge"
    assert got["systems"]["system"]["metrics"] == {"hit rate_at_3": 1.0, "mrr": results["mrr"]}
    assert got["parent"]["params"]["metric.hit rate_at_3"] == "hit rate@3 = Success@3"


def _logged(uri: str, parent: str) -> dict:
    got = _read(uri, parent)
    drop = ("config.sha256",)  # the config files of the doors differ by their tracking: section
    return {"parent": {k: v for k, v in got["parent"]["params"].items() if k not in drop},
            "files": got["parent"]["files"], "name": got["parent"]["name"],
            "systems": {name: ({k: v for k, v in run["params"].items() if k not in drop}, run["metrics"],
                               run["files"]) for name, run in got["systems"].items()}}


def test_the_three_doors_log_the_same_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    uri = _uri(tmp_path)
    (tmp_path / "plain").mkdir()
    plain = _files(tmp_path / "plain")
    # 1. Python: the report of the config, logged by eb.log_mlflow
    api = eb.log_mlflow(eb.run_config(eb.load_config(plain), write=False).report, uri=uri, experiment="doors")
    # 2. the command line: evalbridge run CONFIG --mlflow URI
    code, _, err = _cli("run", str(plain), "--no-write", "--mlflow", uri, "--mlflow-experiment", "doors")
    assert code == 0, err
    assert "logged to mlflow: run " in err
    # 3. the config: tracking: {mlflow: {uri, experiment}}
    folder = tmp_path / "tracked"
    folder.mkdir()
    tracked = _files(folder, f"tracking: {{mlflow: {{uri: '{uri}', experiment: doors}}}}\n")
    outcome = eb.run_config(eb.load_config(tracked), write=False)
    assert len(outcome.tracked) == 1
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("doors").experiment_id
    parents = client.search_runs([experiment], filter_string="tags.mlflow.parentRunId IS NULL",
                                 order_by=["attributes.start_time ASC"])
    assert len(parents) == 3 and parents[0].info.run_id == api.parent
    assert parents[2].info.run_id == outcome.tracked[0].parent
    first, *others = [_logged(uri, p.info.run_id) for p in parents]
    # evalbridge eval QRELS RUN... --mlflow URI: the same systems, params of the same names, the same means
    code, _, err = _cli("eval", "plain/qrels.txt", "plain/bm25.run", "plain/dense.run", "-m", *METRICS,
                        "--min-relevance", "1", "--mlflow", uri, "--mlflow-experiment", "eval-door")
    assert code == 0, err
    (top,) = client.search_runs([client.get_experiment_by_name("eval-door").experiment_id],
                                filter_string="tags.mlflow.parentRunId IS NULL")
    evaluated = _logged(uri, top.info.run_id)
    assert {name: run[1] for name, run in evaluated["systems"].items()} == \
        {name: run[1] for name, run in first["systems"].items()}
    assert set(evaluated["parent"]) == set(first["parent"])
    assert first["systems"]["bm25"][1] and first["parent"]["input.qrels.sha256"]
    for other in others:
        assert other == first


DECISION = ("comparison: {baseline: bm25, n_resamples: 200}\n"
            "gates:\n  nDCG@10: '>= baseline - 0.01'\n  'dense: P@1': ['>= 0.5', '> baseline at 95%']\npower: true\n")


def test_the_parent_run_holds_every_difference_and_gate_outcome(tmp_path: Path) -> None:
    report = eb.run_config(eb.load_config(_files(tmp_path, DECISION)), write=False).report
    assert report.comparison is not None and len(report.gates) == 3
    tracked = eb.log_mlflow(report, uri=_uri(tmp_path))
    client = MlflowClient(tracking_uri=_uri(tmp_path))
    parent = client.get_run(tracked.parent).data
    for row in report.comparison.rows:  # every difference, its unadjusted interval, its corrected p-value
        key = f"diff.{row.system}.{tracking_key(row.metric)}"
        assert {stat: parent.metrics[f"{key}.{stat}"] for stat in ("delta", "ci_low", "ci_high", "p_adjusted")} == \
            {"delta": row.delta, "ci_low": row.ci_low, "ci_high": row.ci_high, "p_adjusted": row.p_adjusted}
        assert parent.metrics[f"{key}.significant"] == float(row.significant)
        assert (parent.metrics[f"{key}.wins"], parent.metrics[f"{key}.losses"]) == (row.wins, row.losses)
    expected = {"gate.dense.nDCG_at_10.ge baseline - 0.01": "failed", "gate.dense.P_at_1.ge 0.5": "passed",
                "gate.dense.P_at_1.gt baseline at 95pct": "inconclusive"}
    assert sorted(g.outcome for g in report.gates) == sorted(expected.values())
    for gate in report.gates:  # every gate: its outcome as a tag, the verdict the run counts and its numbers
        (name,) = [n for n, outcome in expected.items() if outcome == gate.outcome]
        assert parent.tags[name] == gate.outcome
        assert parent.metrics[f"{name}.passed"] == float(gate.passed)
        assert parent.metrics[f"{name}.value"] == gate.value and parent.metrics[f"{name}.threshold"] == gate.threshold
    assert parent.metrics["gate.dense.P_at_1.gt baseline at 95pct.ci_low"] == report.gates[-1].ci_low
    assert parent.metrics["gates.failed"] == 2 and parent.tags["decision.gates"] == "failed"
    assert parent.tags["decision.significance"] == report.comparison.describe()
    for row in report.analyses["power"].rows:  # the analyses' headline numbers
        assert parent.metrics[f"power.{row.system}.{tracking_key(row.metric)}.detectable"] == row.mde
    # each key sorts and filters in the UI: the differences of one system, the failed gates
    runs = client.search_runs([client.get_run(tracked.parent).info.experiment_id],
                              filter_string="metrics.`diff.dense.nDCG_at_10.delta` < 0")
    assert [r.info.run_id for r in runs] == [tracked.parent]


def test_the_three_doors_log_the_same_decision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    uri = _uri(tmp_path)
    config = _files(tmp_path, DECISION)
    api = eb.log_mlflow(eb.run_config(eb.load_config(config), write=False).report, uri=uri, experiment="doors")
    code, _, err = _cli("run", str(config), "--no-write", "--mlflow", uri, "--mlflow-experiment", "doors")
    assert code == 1, err  # a gate failed
    (tmp_path / "tracked").mkdir()
    tracked = _files(tmp_path / "tracked", DECISION + f"tracking: {{mlflow: {{uri: '{uri}', experiment: doors}}}}\n")
    eb.run_config(eb.load_config(tracked), write=False)
    client = MlflowClient(tracking_uri=uri)
    parents = client.search_runs([client.get_experiment_by_name("doors").experiment_id],
                                 filter_string="tags.mlflow.parentRunId IS NULL", order_by=["attributes.start_time ASC"])
    assert len(parents) == 3 and parents[0].info.run_id == api.parent
    logged = [(p.data.metrics, {k: v for k, v in p.data.tags.items() if not k.startswith("mlflow.")})
              for p in parents]
    assert any(k.startswith("diff.") for k in logged[0][0]) and "decision.gates" in logged[0][1]
    assert logged[1] == logged[0] and logged[2] == logged[0]


def test_a_run_flag_overrides_the_config_tracking_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = _files(tmp_path, f"tracking: {{mlflow: {{uri: '{_uri(tmp_path)}', experiment: from-config}}}}\n")
    other = f"sqlite:///{tmp_path / 'other.db'}"
    code, _, err = _cli("run", str(config), "--no-write", "--mlflow", other)
    assert code == 0, err
    assert MlflowClient(tracking_uri=other).get_experiment_by_name("from-config") is not None
    assert not (tmp_path / "mlflow.db").exists()


@pytest.mark.parametrize("uri", ["ftp://example.org/store", "nosuchscheme://x"])
def test_a_store_mlflow_cannot_open_is_a_clear_error_at_every_door(tmp_path: Path, uri: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = _files(tmp_path)
    results = eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1")
    with pytest.raises(eb.InputError, match=f"MLflow could not log to '{uri}'.*Fix: give a tracking store"):
        eb.log_mlflow(results, uri=uri)
    code, out, err = _cli("run", str(config), "--no-write", "--mlflow", uri)
    assert code == 2 and err.startswith(f"evalbridge: error: MLflow could not log to '{uri}'")
    assert "Traceback" not in err and "MlflowException" not in err and len(err.strip().splitlines()) == 1


def test_tracking_options_are_checked_before_anything_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cases = {"tracking: {mlflow: {experiment: x}}\n": "tracking.mlflow.uri: MLflow needs its uri",
             "tracking: {mlflow: {uri: ''}}\n": "tracking.mlflow.uri must be a non-empty text",
             "tracking: {mlflw: {uri: x.db}}\n": "did you mean 'mlflow'",
             "tracking: {mlflow: {uri: x.db, run: y}}\n": "unknown key 'run'"}
    for i, (text, message) in enumerate(cases.items()):
        folder = tmp_path / str(i)
        folder.mkdir()
        config = _files(folder, text)
        with pytest.raises(eb.InputError, match=message) as error:
            eb.load_config(config)
        assert f"{config}:6" in str(error.value)
        code, _, err = _cli("run", str(config))
        assert code == 2 and message.split("'")[0] in err
    code, _, err = _cli("run", str(_files(tmp_path)), "--mlflow", "bad\x01uri")
    assert code == 2 and "--mlflow must be a non-empty text on one line" in err
    with pytest.raises(eb.InputError, match="uri must be a non-empty text"):
        eb.log_mlflow(eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1"), uri="")


def test_missing_mlflow_says_the_extra_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tracker's library, looked up by name, is absent (a module name that does not exist stands for it)."""
    import evalbridge.tracking.mlflow as module

    monkeypatch.setattr(module, "TRACKER", replace(module.TRACKER, module="evalbridge_no_such_tracker_library"))
    monkeypatch.chdir(tmp_path)
    config = _files(tmp_path, f"tracking: {{mlflow: {{uri: '{_uri(tmp_path)}'}}}}\n")
    fix = "pip install 'evalbridge[mlflow]'"
    with pytest.raises(eb.InputError, match=r"tracking\.mlflow: logging to MLflow needs") as error:
        eb.load_config(config)
    assert error.value.fix == fix
    code, _, err = _cli("run", str(_files(tmp_path)), "--mlflow", _uri(tmp_path))
    assert code == 2 and err.rstrip().endswith(f"Fix: {fix}")
    with pytest.raises(eb.BackendUnavailableError, match=fix.replace("[", r"\[").replace("]", r"\]")):
        eb.log_mlflow(eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1"), uri=_uri(tmp_path))
    assert not (tmp_path / "mlflow.db").exists()


def test_an_agreement_alone_has_nothing_to_track(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(QRELS)
    (tmp_path / "b.txt").write_text(QRELS)
    config = tmp_path / "agree.yaml"
    config.write_text("agreement: {judges: {a: a.txt, b: b.txt}}\ntracking: {mlflow: {uri: 'sqlite:///x.db'}}\n")
    with pytest.raises(eb.InputError, match="evaluates no system"):
        eb.load_config(config)


@given(st.text(min_size=1, max_size=40))
def test_every_label_becomes_a_name_mlflow_accepts(label: str) -> None:
    from mlflow.exceptions import MlflowException
    from mlflow.utils.validation import _validate_metric_name, _validate_param_name

    key = tracking_key(label)
    try:
        _validate_metric_name(key)
        _validate_param_name(f"metric.{key}")
    except MlflowException as error:  # pragma: no cover - the failure shows the label
        pytest.fail(f"{label!r} -> {key!r}: {error}")


def test_two_labels_that_would_log_under_one_name_are_refused() -> None:
    results = eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, {"P@1": "P@1", "P_at_1": "RR"})
    with pytest.raises(eb.InputError, match="'P@1' and 'P_at_1' would both be logged as 'P_at_1'"):
        tracked_runs(results)


def test_a_registered_html_report_format_is_logged_as_report_html(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook for report.html: once the format registry has ``html``, the parent run carries its rendering."""
    from evalbridge.views import formats
    from evalbridge.views.formats import ReportFormat

    table = dict(formats.report_formats())
    table["html"] = ReportFormat("html", ".html", "a page", lambda report: f"<h1>{report.title}</h1>", order=99)
    monkeypatch.setattr(formats, "report_formats", lambda: table)
    results = eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1")
    parent, _ = tracked_runs({"a": results}, title="nightly")
    assert sorted(parent.files) == ["provenance.json", "report.html"]
    with tempfile.TemporaryDirectory() as folder:
        parent.files["report.html"](Path(folder) / "report.html")
        assert (Path(folder) / "report.html").read_text() == "<h1>nightly</h1>"


# ---------------------------------------------------------------- stores that cannot be opened, and long names

def _refused_port() -> int:
    """A local port nothing listens on (bound, then closed): connecting to it is refused at once."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _store(tmp_path: Path, kind: str) -> str:
    import os

    if kind == "refused port":
        return f"http://127.0.0.1:{_refused_port()}"
    path = tmp_path / "store" / "mlflow.db"
    path.parent.mkdir()
    if kind == "not a database":
        path.write_text("title,value\nnot,sqlite\n")
    elif kind == "a folder":
        path.mkdir()
    elif kind == "read-only file":
        MlflowClient(tracking_uri=f"sqlite:///{path}").search_experiments()  # a real store, then read-only
        os.chmod(path, 0o444)
    elif kind == "read-only folder":
        os.chmod(path.parent, 0o555)
    elif kind == "under a file":
        (tmp_path / "store" / "notes.txt").write_text("a file\n")
        path = tmp_path / "store" / "notes.txt" / "runs" / "mlflow.db"
    return f"sqlite:///{path}"


@pytest.mark.parametrize("kind", ["not a database", "a folder", "read-only file", "read-only folder", "under a file",
                                  "refused port"])
def test_a_store_that_cannot_be_opened_fails_at_once_with_the_uri_and_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    import os
    import time

    monkeypatch.chdir(tmp_path)
    uri = _store(tmp_path, kind)
    config = _files(tmp_path)
    try:
        started = time.monotonic()
        code, _, err = _cli("run", str(config), "--no-write", "--mlflow", uri)
        took = time.monotonic() - started
        with pytest.raises(eb.InputError, match=f"MLflow could not log to '{uri}'.*Fix: "):
            eb.log_mlflow(eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1"), uri=uri)
    finally:
        os.chmod(tmp_path / "store", 0o755) if (tmp_path / "store").is_dir() else None
    assert code == 2, err
    assert err.startswith(f"evalbridge: error: MLflow could not log to '{uri}'") and "Fix: " in err, err
    assert len(err.strip().splitlines()) == 1 and "DatabaseError" not in err and "internal error" not in err
    assert took < 15, f"{took:.0f} s: MLflow's retries were entered"  # they take 100 s and more


def test_a_host_that_does_not_resolve_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The resolver answers that the name does not exist (no network is asked)."""
    import socket

    def nowhere(*args: object, **kwargs: object) -> object:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", nowhere)
    with pytest.raises(eb.InputError, match="the host 'tracking.example' cannot be resolved"):
        eb.log_mlflow(eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1"), uri="http://tracking.example:5000")


def test_long_system_names_and_labels_are_logged_under_short_stable_names(tmp_path: Path) -> None:
    long_system, long_label = "bm25 " + "x" * 300, "P@1 of " + "y" * 300
    results = eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, {long_label: "P@1"})
    uri = _uri(tmp_path)
    tracked = eb.log_mlflow({long_system: results, "dense": results}, uri=uri)
    logged = _read(uri, tracked.parent)
    assert set(logged["systems"]) == {long_system, "dense"}
    (key,) = logged["systems"]["dense"]["metrics"]
    assert len(key) <= 250 and key.startswith("P_at_1 of yyy") and key.endswith("y" * 20)
    assert key == tracked_runs({"dense": results})[1]["dense"].metrics.keys().__iter__().__next__()  # stable
    assert logged["systems"][long_system]["metrics"] == {key: 1.0}


@pytest.mark.parametrize(("label", "key"), [("long (7+)", "long 7plus"), ("P(rel=2)@5", "P_rel_2_at_5"),
                                            ("<= 10 words", "lt 10 words"), ("top 5%", "top 5pct")])
def test_a_key_is_readable(label: str, key: str) -> None:
    assert tracking_key(label) == key


@given(st.text(min_size=1, max_size=600))
def test_every_bounded_key_is_a_name_mlflow_accepts(label: str) -> None:
    from mlflow.exceptions import MlflowException
    from mlflow.utils.validation import _validate_metric_name

    from evalbridge.tracking import bounded_key

    key = bounded_key(f"slice.{tracking_key(label)}.AP")
    assert len(key) <= 250 and key.endswith(".AP")
    try:
        _validate_metric_name(key)
    except MlflowException as error:  # pragma: no cover - the failure shows the label
        pytest.fail(f"{label!r} -> {key!r}: {error}")


LABELS = ("judges:\n  labels: {llm: llm.txt}\n  reruns: {llm: [llm_again.txt]}\n"
          "pool:\n  strata: {1-1: 1, 2-10: 0.5}\n")


def test_the_parent_run_holds_the_headline_numbers_of_the_pool_and_the_judges(tmp_path: Path) -> None:
    """A config with a stratified pool and an LLM judge run twice: every headline number (the pool's pairs per depth
    and pairs sampled, each judge's kappas, its re-runs' kappa and the tau_AP of its system order) is a metric of the
    parent run, read back with MlflowClient, named by its parts."""
    config = _files(tmp_path, LABELS)
    (tmp_path / "llm.txt").write_text(QRELS.replace("d2 1", "d2 2").replace("d6 0", "d6 1"))
    (tmp_path / "llm_again.txt").write_text(QRELS.replace("d6 0", "d6 1"))
    report = eb.run_config(eb.load_config(config), write=False).report
    from evalbridge.views.sections import report_headlines

    headlines = report_headlines(report)
    keys = {parts[-1] for parts in headlines}
    assert {"pairs", "sampled", "kappa", "quadratic_kappa", "rerun_kappa", "tau_ap"} <= keys, keys
    tracked = eb.log_mlflow(report, uri=_uri(tmp_path))
    logged = MlflowClient(tracking_uri=_uri(tmp_path)).get_run(tracked.parent).data.metrics
    for parts, value in headlines.items():
        assert logged[".".join(tracking_key(part) for part in parts)] == value, (parts, value)
    assert logged["judges.llm.rerun_kappa"] == report.analyses["judges"].cards[0].summary()["rerun_kappa"]


def test_the_parent_run_holds_the_headline_numbers_of_the_judge_agreement(tmp_path: Path) -> None:
    """A config with an agreement: section ranking its runs: the judges' kappas, Krippendorff's alpha, the shared
    pairs and, per metric, Kendall's tau, tau_AP and the flipped pairs are metrics of the parent run (MlflowClient),
    equal to the agreement's own numbers."""
    config = _files(tmp_path, "agreement: {judges: {human: qrels.txt, llm: llm.txt}, runs: [bm25, dense], "
                              "metrics: [P@1, AP]}\n")
    (tmp_path / "llm.txt").write_text(QRELS.replace("d2 1", "d2 2").replace("d6 0", "d6 1"))
    report = eb.run_config(eb.load_config(config), write=False).report
    judges, ranking = report.agreement.judges, report.agreement.ranking
    tracked = eb.log_mlflow(report, uri=_uri(tmp_path))
    logged = MlflowClient(tracking_uri=_uri(tmp_path)).get_run(tracked.parent).data.metrics
    assert logged["agreement.pairs"] == judges.shared_pairs == 5
    assert logged["agreement.kappa"] == judges.cohen_kappa
    assert logged["agreement.quadratic_kappa"] == judges.weighted_kappa
    assert logged["agreement.krippendorff_alpha"] == judges.krippendorff_alpha
    for row in ranking.rows:
        key = f"agreement.{tracking_key(row.metric)}"
        assert logged[f"{key}.flipped"] == row.flipped
        for stat in ("kendall_tau", "tau_ap"):  # a tie of means leaves tau undefined (nan), and a nan is not logged
            value = getattr(row, stat)
            assert logged.get(f"{key}.{stat}", math.nan) == value or (value != value and f"{key}.{stat}" not in logged)
    assert [row.metric for row in ranking.rows] == ["P@1", "AP"]
    assert any(f"agreement.AP.{stat}" in logged for stat in ("kendall_tau", "tau_ap")), logged
