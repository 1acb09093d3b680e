"""The public API is visible to type checkers and IDEs, although `import evalbridge` loads it lazily."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import evalbridge as eb

SNIPPET = '''\
import evalbridge as eb

results = eb.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 0.5}}, ["P@1"])
reveal_type(results)
reveal_type(eb.crosscheck)
reveal_type(eb.read_qrels)
reveal_type(eb.compare)
reveal_type(results.means)
reveal_type(eb.diagnose({}, {}, "official"))
reveal_type(eb.uncertain({}, "nDCG@10", judges={}))
'''


STRICT_USER = '''\
import evalbridge as eb
from evalbridge.cross_check.checking import CrossCheck

results: eb.Results = eb.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 0.5}}, ["P@1"])
check: CrossCheck = eb.crosscheck({"q1": {"d1": 1}}, {"q1": {"d1": 0.5}}, "P@1")
qrels: eb.Qrels = eb.read_qrels("qrels.txt")
means: dict[str, float] = results.means
'''


@pytest.fixture(scope="session")
def mypy_strict(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int, Path]:
    """One ``mypy`` run with the project's settings (pyproject.toml: strict) over the package and two user scripts.

    One run, not three: each run analyses the whole package again (about 40 s of CPU); the project's cache is the
    one ``mypy`` from the command line fills and reuses. One run for the whole suite, also on pytest-xdist's workers
    (``make test``): the first worker to need it runs it under a lock in the folder the workers' temporary folders
    share, and the others read its report there."""
    import fcntl
    import json

    api = pytest.importorskip("mypy.api", reason="mypy is a test dependency")
    root = Path(__file__).resolve().parent.parent
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    scripts, saved = shared / "mypy_users", shared / "mypy_report.json"
    with open(shared / "mypy.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not saved.is_file():
            scripts.mkdir(exist_ok=True)
            (scripts / "use_evalbridge.py").write_text(SNIPPET)
            (scripts / "strict_user.py").write_text(STRICT_USER)
            out, err, status = api.run(["--config-file", str(root / "pyproject.toml"), "--cache-dir",
                                        str(root / ".mypy_cache"), str(root / "evalbridge"),
                                        str(scripts / "use_evalbridge.py"), str(scripts / "strict_user.py")])
            saved.write_text(json.dumps([out + err, status]))
    report, status = json.loads(saved.read_text())
    return report, status, scripts


def _lines_of(report: str, path: Path) -> list[str]:
    """The report's lines about the file ``path``, named by its file name: a module mypy takes from its cache unchanged
    is reported under the path it had when cached (another temporary folder of an earlier run)."""
    return [line for line in report.splitlines() if Path(line.split(":", 1)[0]).name == path.name]


@pytest.mark.slow
def test_mypy_sees_the_signature_of_every_public_name(mypy_strict: tuple[str, int, Path]) -> None:
    """`reveal_type(eb.evaluate(...))` is `Results`, not `Any`: the lazy `__getattr__` no longer hides the API; a
    verb given "official" (a dataset's several measures) is typed as returning the several metrics' result."""
    report, _, scripts = mypy_strict
    lines = _lines_of(report, scripts / "use_evalbridge.py")
    revealed = [line.split("Revealed type is ", 1)[1] for line in lines if "Revealed type is" in line]
    assert len(revealed) == 7, report
    assert revealed[0] == '"evalbridge.evaluation.results.Results"'
    assert "CrossCheck" in revealed[1] and "Qrels" in revealed[2] and "Comparison" in revealed[3]
    assert revealed[4].strip("\"").replace("builtins.", "") == "dict[str, float]"
    # "official" is the dataset's several measures: the several metrics' result; one metric's name: its own
    assert revealed[5].endswith('.Diagnoses"') and revealed[6].endswith('.Uncertainty"'), revealed
    assert not any("Any" == r.strip('"') for r in revealed)
    assert not [line for line in lines if ": error:" in line], report


@pytest.mark.slow
def test_the_package_passes_mypy_strict(mypy_strict: tuple[str, int, Path]) -> None:
    """`mypy` with the project's settings (pyproject.toml: `strict = true` on the package) finds no error."""
    report, status, _ = mypy_strict
    assert status == 0 and "Success: no issues found" in report and ": error:" not in report, report


@pytest.mark.slow
def test_a_strict_user_script_may_use_every_public_name(mypy_strict: tuple[str, int, Path]) -> None:
    """Under `mypy --strict` (no implicit re-export) `eb.evaluate`, `eb.Results`... are names the package
    exports, not errors: the TYPE_CHECKING imports of `evalbridge/__init__.py` re-export them ("X as X")."""
    report, _, scripts = mypy_strict
    assert not _lines_of(report, scripts / "strict_user.py"), report


def test_the_public_api_is_one_name_per_job_and_at_most_forty_five_names() -> None:
    """`evalbridge.__all__` stays small (ranx has 8 names): every name resolves, and the names that other
    libraries spell two ways (compare_systems, agreement, to_qrels, write_run...) are not public twice. The cap was
    40 until the verbs of LLM labels and many systems (ppi, judges) and the Statistics value joined: 41 names; 42 with fuse."""
    names = [n for n in eb.__all__ if n != "__version__"]
    assert len(names) <= 45 and len(set(names)) == len(names)
    assert all(getattr(eb, n) is not None for n in names)
    retired = {"compare_systems", "agreement", "ranking_agreement", "to_qrels", "to_run", "as_qrels", "as_run",
               "write_qrels", "write_run", "write_json", "write_jsonl", "parse_metric", "parse_metrics", "parse_gates",
               "load_configs", "read_log", "read_judged_list", "Conventions"}
    assert sorted(retired & set(eb.__all__)) == []


def test_every_public_name_is_the_function_even_after_its_module_is_imported() -> None:
    """A public name whose module has the same name would be shadowed by the submodule once imported
    (``import evalbridge.x`` binds ``evalbridge.x`` to the module): no public name is a module."""
    import importlib
    import types

    for name, module in eb._EXPORTS.items():
        importlib.import_module(f"evalbridge.{module}")
        assert not isinstance(getattr(eb, name), types.ModuleType), name
