"""The pytest plugin (entry point ``pytest11``): retrieval gates as test items, and a fixture.

* ``pytest --evalbridge-config configs/rag.yaml`` runs the config once and adds one test item per
  gate and system (``evalbridge::rag::hybrid::R@5 >= 0.80``), passing or failing with the gate's line;
* the ``assert_retrieval`` fixture is :func:`evalbridge.testing.assert_retrieval`.

Loading the plugin costs nothing: evalbridge is imported only when a config is given or the fixture used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["pytest_addoption", "pytest_collection_modifyitems", "assert_retrieval", "GateItem"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalbridge", "retrieval quality gates")
    group.addoption("--evalbridge-config", action="append", default=[], metavar="CONFIG",
                    help="run an evalbridge config and turn each of its gates into a test item")


class GateItem(pytest.Item):
    """One gate applied to one system."""

    def __init__(self, *, result: Any, line: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.result, self.line = result, line

    def runtest(self) -> None:
        if not self.result.passed:
            raise AssertionError(self.line)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:  # noqa: ARG002 - pytest's signature
        return self.line

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    paths = config.getoption("evalbridge_config")
    if not paths:
        return
    from .config import load_configs
    from .pipeline import run_config
    from .testing import gate_lines

    for path in paths:
        for evaluation in load_configs(path):
            outcome = run_config(evaluation, write=False)
            for result in outcome.report.gates:
                name = f"evalbridge::{evaluation.title}::{result.system}::{result.metric} {result.gate.text}"
                items.append(GateItem.from_parent(session, name=name, result=result, line=gate_lines([result])[0]))


@pytest.fixture
def assert_retrieval() -> Callable[..., Any]:
    """:func:`evalbridge.testing.assert_retrieval`: evaluate a run and check gates, failing with readable lines."""
    from .testing import assert_retrieval as check

    return check
