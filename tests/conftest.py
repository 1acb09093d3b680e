"""Shared test helpers: where the external data lives (``/work/shared``, next to the checkout)."""

from __future__ import annotations

from pathlib import Path

import pytest

#: The shared data folder next to the checkout (``../shared``). Never copied into the repo.
SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    """The ``../shared`` folder; the test is skipped only when the folder does not exist."""
    if not SHARED.is_dir():
        pytest.skip(f"../shared is absent: {SHARED} does not exist (external test data lives there)")
    return SHARED


def _hypothesis_profile() -> None:
    """No deadline and no "too slow" health check: CI machines are slow and timing must never fail a test."""
    from hypothesis import HealthCheck, settings

    settings.register_profile("evalbridge", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("evalbridge")


_hypothesis_profile()
