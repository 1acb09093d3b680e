"""The Makefile's two installs: `make run` installs the package alone, `make test` adds the extras, and
each remembers what it did (one stamp each), checked with `make -n` (what make would do, nothing run)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXTRAS = '".[test,spark,spark-connect,mlflow,datasets]"'


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The Makefile and pyproject.toml in a scratch folder, with a venv interpreter that is only a file."""
    if shutil.which("make") is None:
        pytest.skip("`make` is not installed")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    os.utime(tmp_path / "pyproject.toml", (1_000_000, 1_000_000))
    return tmp_path


def _stamp(checkout: Path, *names: str) -> None:
    for name in names:
        path = checkout / ".venv" / f".installed-{name}"
        path.touch()
        os.utime(path, (2_000_000, 2_000_000))  # newer than pyproject.toml


def planned(checkout: Path, target: str) -> list[str]:
    """The pip commands `make -n TARGET` would run."""
    done = subprocess.run(["make", "-n", target], cwd=checkout, capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if "pip install" in line]


def test_make_run_installs_the_package_without_any_extra(checkout: Path) -> None:
    """From nothing, `make run` installs `-e .` only: no test, Spark or Spark Connect extra."""
    (line,) = planned(checkout, "run")
    assert line.endswith(" -e .") and "[" not in line


def test_make_test_installs_every_extra(checkout: Path) -> None:
    """From nothing, `make test` installs the package with the test, Spark, Spark Connect, MLflow and datasets extras,
    then the `rbo` oracle without its dependencies (its metadata's numpy < 2 would downgrade the venv)."""
    line, oracle = planned(checkout, "test")
    assert line.endswith(EXTRAS)
    assert "--no-deps" in oracle and '"rbo==' in oracle


def test_make_run_after_make_test_installs_nothing(checkout: Path) -> None:
    """The full install stamps both: `make run` afterwards has nothing to install."""
    _stamp(checkout, "test", "run")
    assert planned(checkout, "run") == [] and planned(checkout, "test") == []


def test_make_test_after_make_run_adds_the_extras(checkout: Path) -> None:
    """After `make run`, `make test` still installs the extras; `make run` again installs nothing."""
    _stamp(checkout, "run")
    assert planned(checkout, "run") == []
    line, _ = planned(checkout, "test")
    assert line.endswith(EXTRAS)


def test_a_changed_pyproject_reinstalls(checkout: Path) -> None:
    """Stamps older than pyproject.toml count for nothing."""
    _stamp(checkout, "test", "run")
    os.utime(checkout / "pyproject.toml", (3_000_000, 3_000_000))
    assert len(planned(checkout, "run")) == 1 and len(planned(checkout, "test")) == 2


def _pytest_line(checkout: Path, *args: str) -> str:
    done = subprocess.run(["make", "-n", "test", *args], cwd=checkout, capture_output=True, text=True, check=True)
    (line,) = [line for line in done.stdout.splitlines() if "-m pytest" in line]
    return line


def test_make_test_runs_the_whole_suite_on_every_core_and_mypy_inside_it(checkout: Path) -> None:
    """`make test` runs pytest once, on as many workers as cores (pytest-xdist, in the test extra); mypy is not run a
    second time before it (tests/test_typing.py runs it once for the whole suite).
    TEST_WORKERS=0 runs the suite in one process."""
    _stamp(checkout, "test", "run")
    assert _pytest_line(checkout).endswith("-m pytest -n auto")
    assert _pytest_line(checkout, "TEST_WORKERS=0").endswith("-m pytest -n 0")
    done = subprocess.run(["make", "-n", "test"], cwd=checkout, capture_output=True, text=True, check=True)
    assert "-m mypy" not in done.stdout
    extra = (REPO / "pyproject.toml").read_text()
    assert '"pytest-xdist>=' in extra
