"""The public API is visible to type checkers and IDEs, although `import evalbridge` loads it lazily."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    assert revealed[0] == '"evalbridge.results.Results"'
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
    snippet.write_text('import evalbridge as eb\n\n'
                       'results: eb.Results = eb.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 0.5}}, ["P@1"])\n'
                       'check: eb.CrossCheck = eb.crosscheck({"q1": {"d1": 1}}, {"q1": {"d1": 0.5}}, "P@1")\n'
                       'qrels: eb.Qrels = eb.read_qrels("qrels.txt")\n'
                       'means: dict[str, float] = results.means\n')
    out, err, status = api.run([str(snippet), "--strict", "--follow-imports=silent", "--cache-dir",
                                str(tmp_path / ".mypy_cache"), "--no-error-summary"])
    assert status == 0, out + err
