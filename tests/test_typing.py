"""The public API is visible to type checkers and IDEs, although `import evalbridge` loads it lazily."""

from __future__ import annotations

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
'''


@pytest.mark.slow
def test_mypy_sees_the_signature_of_every_public_name(tmp_path: Path) -> None:
    """`reveal_type(eb.evaluate(...))` is `Results`, not `Any`: the lazy `__getattr__` no longer hides the API."""
    api = pytest.importorskip("mypy.api", reason="mypy is a test dependency")
    snippet = tmp_path / "use_evalbridge.py"
    snippet.write_text(SNIPPET)
    out, err, _ = api.run([str(snippet), "--ignore-missing-imports", "--follow-imports=silent",
                           "--cache-dir", str(tmp_path / ".mypy_cache"), "--no-error-summary"])
    revealed = [line.split("Revealed type is ", 1)[1] for line in out.splitlines() if "Revealed type is" in line]
    assert len(revealed) == 5, out + err
    assert revealed[0] == '"evalbridge.evaluation.results.Results"'
    assert "CrossCheck" in revealed[1] and "Qrels" in revealed[2] and "Comparison" in revealed[3]
    assert revealed[4].strip("\"").replace("builtins.", "") == "dict[str, float]"
    assert not any("Any" == r.strip('"') for r in revealed)


@pytest.mark.slow
def test_the_package_passes_mypy_strict() -> None:
    """`mypy` with the project's settings (pyproject.toml: `strict = true` on the package) finds no error.

    `make test` runs the same check before pytest (and fills the cache this run reuses); this test keeps
    the check in any pytest run of the suite."""
    api = pytest.importorskip("mypy.api", reason="mypy is a test dependency")
    root = Path(__file__).resolve().parent.parent
    out, err, status = api.run(["--config-file", str(root / "pyproject.toml"), "--cache-dir",
                                str(root / ".mypy_cache"), str(root / "evalbridge")])
    assert status == 0, out + err
    assert out.startswith("Success: no issues found"), out + err


@pytest.mark.slow
def test_a_strict_user_script_may_use_every_public_name(tmp_path: Path) -> None:
    """Under `mypy --strict` (no implicit re-export) `eb.evaluate`, `eb.Results`... are names the package
    exports, not errors: the TYPE_CHECKING imports of `evalbridge/__init__.py` re-export them ("X as X")."""
    api = pytest.importorskip("mypy.api", reason="mypy is a test dependency")
    snippet = tmp_path / "strict_user.py"
    snippet.write_text('import evalbridge as eb\nfrom evalbridge.cross_check.checking import CrossCheck\n\n'
                       'results: eb.Results = eb.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 0.5}}, ["P@1"])\n'
                       'check: CrossCheck = eb.crosscheck({"q1": {"d1": 1}}, {"q1": {"d1": 0.5}}, "P@1")\n'
                       'qrels: eb.Qrels = eb.read_qrels("qrels.txt")\n'
                       'means: dict[str, float] = results.means\n')
    out, err, status = api.run([str(snippet), "--strict", "--follow-imports=silent", "--cache-dir",
                                str(tmp_path / ".mypy_cache"), "--no-error-summary"])
    assert status == 0, out + err


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
