"""MLflow as a tracker: the runs of :func:`evalbridge.tracking.tracked_runs` sent through ``MlflowClient``.

One parent run per evaluation and one run per system nested under it (MLflow's ``mlflow.parentRunId`` tag), made
with ``MlflowClient`` (never the fluent ``mlflow.start_run``: no active run, tracking URI or experiment of the
process is read or changed). ``mlflow`` is imported only when a run is logged; the ``mlflow`` extra installs
``mlflow-skinny`` with SQLAlchemy and Alembic, what its SQLite store needs (docs/tracking.md says why).
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..common.parameters import Text
from . import RunLog, Tracked, Tracker

__all__ = ["TRACKER"]

#: MLflow's limits: params and tags per ``log_batch`` call, metrics per call, characters of a param's value
_BATCH_PARAMS, _BATCH_METRICS, _PARAM_VALUE = 100, 1000, 6000
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


#: the first bytes of every SQLite 3 database file
_SQLITE_HEADER = b"SQLite format 3\x00"
#: seconds a tracking server's host may take to resolve and to accept a connection, before logging starts
_CONNECT_TIMEOUT = 5.0


def _store_problem(uri: str) -> tuple[str, str] | None:
    """``(what is wrong, the fix)`` when the store at ``uri`` cannot be opened, checked before MLflow is asked
    (MLflow retries a SQLite file it cannot open for about 100 s, and a server that refuses the connection
    for minutes): a SQLite path that is a folder, not a database, read-only, or under a read-only folder or a
    file (missing folders are created); an HTTP server whose host does not resolve or that refuses the
    connection. None otherwise."""
    if uri.startswith("sqlite:///") and uri != "sqlite:///:memory:":
        return _sqlite_problem(Path(uri[len("sqlite:///"):]).expanduser())
    if uri.startswith(("http://", "https://")):
        return _server_problem(uri)
    return None


def _read_only(path: Path, mode: int) -> bool:
    return not mode & 0o222 or not os.access(path, os.W_OK)


def _sqlite_problem(path: Path) -> tuple[str, str] | None:
    new = "give a new file (created when missing), e.g. sqlite:///mlflow.db"
    if path.is_dir():
        return f"{str(path)!r} is a folder, not a SQLite database file", new
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # MLflow creates the missing folders
        folder = folder.parent
    if not folder.is_dir():
        return f"{str(folder)!r} is a file, where the database's folder would be", new
    if _read_only(folder, folder.stat().st_mode):
        return (f"the folder {str(folder)!r} is read-only (SQLite writes its journal beside the database)",
                f"make it writable (chmod u+w {str(folder)!r}), or {new}")
    if not path.exists():
        return None
    if not path.is_file():
        return f"{str(path)!r} is not a regular file", new
    if _read_only(path, path.stat().st_mode):
        return f"the database {str(path)!r} is read-only", f"make it writable (chmod u+w {str(path)!r}), or {new}"
    try:
        with open(path, "rb") as file:
            head = file.read(len(_SQLITE_HEADER))
    except OSError as error:
        return f"{str(path)!r} cannot be read ({error.strerror})", new
    if head and head != _SQLITE_HEADER:
        return f"{str(path)!r} is not a SQLite database", f"{new}; that file is something else"
    return None


def _server_problem(uri: str) -> tuple[str, str] | None:
    import socket
    import threading
    from urllib.parse import urlsplit

    parts = urlsplit(uri)
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"the port of {parts.netloc!r} is not a number", "write e.g. http://host:5000"
    fix = (f"start the tracking server (mlflow server --host {host} --port {port}), check the host and port, or log "
           "to a local store, e.g. sqlite:///mlflow.db")
    found: list[Any] = []

    def resolve() -> None:
        with contextlib.suppress(OSError):
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))

    looking = threading.Thread(target=resolve, daemon=True)  # getaddrinfo has no timeout of its own
    looking.start()
    looking.join(_CONNECT_TIMEOUT)
    if not found:
        return f"the host {host!r} cannot be resolved", fix
    failures = []
    for family, kind, proto, _, address in found[0]:
        try:
            with socket.socket(family, kind, proto) as connection:
                connection.settimeout(_CONNECT_TIMEOUT)
                connection.connect(address)
            return None
        except OSError as error:
            failures.append(error.strerror or type(error).__name__)
    return f"the tracking server at {host}:{port} cannot be reached ({failures[0] if failures else 'no address'})", fix


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

    problem = _store_problem(uri)
    if problem is not None:
        what, fix = problem
        raise InputError(f"MLflow could not log to {uri!r}: {what}.", fix=f"{fix}.")
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
    from mlflow.entities import Metric, Param, RunTag

    too_long = next((k for k, v in run.params.items() if len(v) > _PARAM_VALUE), None)
    if too_long is not None:
        raise InputError(f"the param {too_long!r} of run {run.name!r} is longer than MLflow keeps "
                         f"({_PARAM_VALUE} characters).", fix="the whole provenance is in provenance.json; shorten "
                                                              "the value (a path, a name).")
    params = [Param(k, v) for k, v in run.params.items()]
    for start in range(0, len(params), _BATCH_PARAMS):
        client.log_batch(run_id, params=params[start:start + _BATCH_PARAMS])
    tags = [RunTag(k, v) for k, v in run.tags.items()]
    for start in range(0, len(tags), _BATCH_PARAMS):
        client.log_batch(run_id, tags=tags[start:start + _BATCH_PARAMS])
    if run.metrics:
        import time

        now = int(time.time() * 1000)
        metrics = [Metric(k, v, now, 0) for k, v in run.metrics.items()]
        for start in range(0, len(metrics), _BATCH_METRICS):
            client.log_batch(run_id, metrics=metrics[start:start + _BATCH_METRICS])
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
