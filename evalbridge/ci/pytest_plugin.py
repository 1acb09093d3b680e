"""The pytest plugin (entry point ``pytest11``): retrieval gates as test items, and a fixture.

* ``pytest --evalbridge-config configs/rag.yaml`` runs the config once and adds one test item per
  gate and system (``evalbridge::configs/rag.yaml::rag::hybrid::R@5 >= 0.80``), passing or failing
  with the gate's line (a gate with a level the eval set cannot decide fails, or is skipped with its line when
  the config says ``on_inconclusive: pass``). The items are collected like any others (``--collect-only``
  counts them); a config that cannot be read or run (a typo in a key, broken YAML, a missing file) is one
  failing item with evalbridge's message, and a config without gates one skipped item saying so;
* the ``assert_retrieval`` fixture is :func:`evalbridge.ci.testing.assert_retrieval`.

Loading the plugin costs nothing: evalbridge is imported only when a config is given or the fixture used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["pytest_addoption", "pytest_collection_modifyitems", "assert_retrieval", "GateItem", "ConfigCollector",
           "NoticeItem"]


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
        if self.result.outcome == "inconclusive":   # let pass by on_inconclusive: pass is a skip that says why
            pytest.skip(self.line)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:  # noqa: ARG002 - pytest's signature
        return self.line

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name


class NoticeItem(pytest.Item):
    """What a config gave instead of gates: an error (the item fails with the message) or no gates (skipped)."""

    def __init__(self, *, message: str, failed: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.message, self.failed = message, failed

    def runtest(self) -> None:
        if self.failed:
            raise AssertionError(self.message)
        pytest.skip(self.message)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:  # noqa: ARG002 - pytest's signature
        return self.message

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name


class ConfigCollector(pytest.Collector):
    """The gates of one config, run once at collection."""

    def collect(self) -> Iterator[pytest.Item]:
        from ..config import load_configs
        from ..errors import EvalbridgeError
        from ..config.pipeline import run_config
        from .testing import gate_line

        shown = self.name.removeprefix("evalbridge::")
        found = 0
        try:
            for evaluation in load_configs(shown):
                outcome = run_config(evaluation, write=False)
                for result in outcome.report.gates:
                    found += 1
                    yield GateItem.from_parent(self, name=f"{evaluation.title}::{result.system}::{result.metric} "
                                                          f"{result.gate.text}",
                                               result=result, line=gate_line(result, outcome.report.comparison))
        except (EvalbridgeError, OSError) as error:  # as the command line says it (exit code 2 there)
            said = str(error) if isinstance(error, EvalbridgeError) else f"{error.strerror or error}: {error.filename}"
            yield NoticeItem.from_parent(self, name="config error", failed=True, message=f"evalbridge: error: {said}")
            return
        except Exception as error:  # noqa: BLE001 - a bug must not become pytest's INTERNALERROR
            yield NoticeItem.from_parent(self, name="internal error", failed=True,
                                         message=f"evalbridge: internal error: {type(error).__name__}: {error}. "
                                                 "This is a bug in evalbridge; please report it.")
            return
        if not found:
            yield NoticeItem.from_parent(self, name="no gates", failed=False, message=f"no gates in {shown}")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    for path in config.getoption("evalbridge_config"):
        collector = ConfigCollector.from_parent(session, name=f"evalbridge::{path}", path=Path(path).absolute())
        items.extend(session.genitems(collector))  # reports the collection as pytest's own, so the counts agree


@pytest.fixture
def assert_retrieval() -> Callable[..., Any]:
    """:func:`evalbridge.ci.testing.assert_retrieval`: evaluate a run and check gates, failing with readable lines."""
    from .testing import assert_retrieval as check

    return check
