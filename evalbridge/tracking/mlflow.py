"""MLflow as a tracker: the runs of :func:`evalbridge.tracking.tracked_runs` sent through ``MlflowClient``.

One parent run per evaluation and one run per system nested under it (MLflow's ``mlflow.parentRunId`` tag), made
with ``MlflowClient`` (never the fluent ``mlflow.start_run``: no active run, tracking URI or experiment of the
process is read or changed). ``mlflow`` is imported only when a run is logged; the ``mlflow`` extra installs
``mlflow-skinny`` with SQLAlchemy and Alembic, what its SQLite store needs (docs/tracking.md says why).
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..common.parameters import Text
from . import RunLog, Tracked, Tracker

__all__ = ["TRACKER"]

#: MLflow's limits: params and tags per ``log_batch`` call, characters of a param's value
_BATCH_PARAMS, _PARAM_VALUE = 100, 6000
_PARENT_TAG = "mlflow.parentRunId"
#: the experiment runs go to when none is named (created on first use)
DEFAULT_EXPERIMENT = "evalbridge"


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """MLflow's INFO lines (a new SQLite store's migrations) left out of the user's stderr while logging."""
    logger = logging.getLogger("mlflow")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


def _refused(uri: str, error: Exception) -> InputError:
    first = str(error).strip().split(". ")[0].rstrip(".")
    folder = " (a folder store needs MLFLOW_ALLOW_FILE_STORE=true)" if "filesystem" in first else ""
    return InputError(f"MLflow could not log to {uri!r}: {first}.",
                      fix=f"give a tracking store MLflow opens, e.g. sqlite:///mlflow.db (a SQLite file, created when "
                          f"missing) or http://host:5000 (a tracking server){folder}.")


def _artifact_root(uri: str) -> str | None:
    """Where a new experiment of a local SQLite store keeps its artifacts: ``mlartifacts/`` beside the database
    (MLflow's default, ``./mlruns``, would be relative to the working directory)."""
    prefix = "sqlite:///"
    if not uri.startswith(prefix) or uri == prefix + ":memory:":
        return None
    return (Path(uri[len(prefix):]).expanduser().resolve().parent / "mlartifacts").as_uri()


def _send(parent: RunLog, systems: Mapping[str, RunLog], options: Mapping[str, Any]) -> Tracked:
    uri: str = options["uri"]
    experiment: str = options.get("experiment") or DEFAULT_EXPERIMENT
    from mlflow.exceptions import MlflowException

    with _quiet():
        try:
            from mlflow.tracking import MlflowClient

            client = MlflowClient(tracking_uri=uri)
            found = client.get_experiment_by_name(experiment)
            experiment_id = (found.experiment_id if found is not None else
                             client.create_experiment(experiment, artifact_location=_artifact_root(uri)))
        except (MlflowException, OSError) as error:
            raise _refused(uri, error) from None
        top = client.create_run(experiment_id, run_name=options.get("run_name") or parent.name)
        top_id: str = top.info.run_id
        ids: dict[str, str] = {}
        try:
            _fill(client, top_id, parent)
            for name, system in systems.items():
                run = client.create_run(experiment_id, run_name=system.name, tags={_PARENT_TAG: top_id})
                ids[name] = run.info.run_id
                try:
                    _fill(client, run.info.run_id, system)
                except BaseException:
                    client.set_terminated(run.info.run_id, "FAILED")
                    raise
                client.set_terminated(run.info.run_id)
        except BaseException:
            client.set_terminated(top_id, "FAILED")
            raise
        client.set_terminated(top_id)
    return Tracked(tracker="mlflow", uri=uri, experiment=experiment, parent=top_id, runs=ids)


def _fill(client: Any, run_id: str, run: RunLog) -> None:
    """Params (in batches of MLflow's size), metrics (one batch) and artifacts (written to a temporary folder,
    then logged) of one run."""
    from mlflow.entities import Metric, Param

    too_long = next((k for k, v in run.params.items() if len(v) > _PARAM_VALUE), None)
    if too_long is not None:
        raise InputError(f"the param {too_long!r} of run {run.name!r} is longer than MLflow keeps "
                         f"({_PARAM_VALUE} characters).", fix="the whole provenance is in provenance.json; shorten "
                                                              "the value (a path, a name).")
    params = [Param(k, v) for k, v in run.params.items()]
    for start in range(0, len(params), _BATCH_PARAMS):
        client.log_batch(run_id, params=params[start:start + _BATCH_PARAMS])
    if run.metrics:
        import time

        now = int(time.time() * 1000)
        client.log_batch(run_id, metrics=[Metric(k, v, now, 0) for k, v in run.metrics.items()])
    if run.files:
        with tempfile.TemporaryDirectory(prefix="evalbridge-mlflow-") as folder:
            for name, write in run.files.items():
                write(Path(folder) / name)
            client.log_artifacts(run_id, folder)


TRACKER = Tracker(
    name="mlflow", title="MLflow", module="mlflow", extra="mlflow",
    options={"uri": Text("uri", fix="e.g. sqlite:///mlflow.db or http://host:5000."),
             "experiment": Text("experiment", default=DEFAULT_EXPERIMENT, fix="e.g. retrieval-eval."),
             "run_name": Text("run_name", fix="e.g. dl19-bm25-vs-splade.")},
    required=("uri",), send=_send)
