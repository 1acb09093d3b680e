"""Shared test helpers: where the external data lives (``/work/shared``, next to the checkout), the browser of
the report-page tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: The shared data folder next to the checkout (``../shared``). Never copied into the repo.
SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    """The ``../shared`` folder; the test is skipped only when the folder does not exist."""
    if not SHARED.is_dir():
        pytest.skip(f"../shared is absent: {SHARED} does not exist (external test data lives there)")
    return SHARED


@pytest.fixture(scope="session")
def dl19(shared: Path) -> Path:
    """The TREC DL 2019 passage folder of ``../shared/data/real`` (runs, qrels, topics, published scores); the test is
    skipped when it is absent."""
    folder = shared / "data" / "real" / "trec-dl-2019-passage"
    if not folder.is_dir():
        pytest.skip(f"../shared/data/real/trec-dl-2019-passage is absent: {folder} does not exist")
    return folder


#: the system's Chromium (Debian's package), which Playwright drives for the tests that open a report page
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (Debian's package; `make test` installs it) driven by Playwright, no browser download."""
    playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is in the test extra: make test")
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"no Chromium at {CHROMIUM}: `make test` installs Debian's chromium package as root")
        pytest.skip(f"no Chromium at {CHROMIUM}: `make test` installs it (apt-get install chromium, as root)")
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


def _hypothesis_profile() -> None:
    """No deadline and no "too slow" health check: CI machines are slow and timing must never fail a test."""
    from hypothesis import HealthCheck, settings

    settings.register_profile("evalbridge", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("evalbridge")


_hypothesis_profile()


@pytest.fixture(scope="session")
def spark():  # noqa: ANN201 - pyspark.sql.SparkSession, imported lazily
    """One local Spark session (``local[2]``) for the whole test run, stopped at the end.

    Skipped only when Java is absent (Spark runs on the JVM). The Python workers run this
    interpreter (``PYSPARK_PYTHON``), so they import the evalbridge under test.
    """
    import os
    import shutil
    import sys

    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and Path(java_home, "bin", "java").exists()):
        pytest.skip("Java is absent (no `java` on PATH and no JAVA_HOME): Spark needs Java 17 or 21")
    from pyspark.sql import SparkSession

    previous = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]").appName("evalbridge-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    if previous is None:
        os.environ.pop("PYSPARK_PYTHON", None)
    else:
        os.environ["PYSPARK_PYTHON"] = previous
