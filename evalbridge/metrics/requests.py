"""Stable names: each metric asked for, with the label every output uses, the spelling asked and the metric.

A :class:`MetricRequest` is made once, in the preparation every verb shares (:func:`metric_requests`:
:func:`evalbridge.evaluate`, :func:`evalbridge.crosscheck`, :func:`evalbridge.compare` and the config
pipeline), so ``results.means``, the reports, the JSON and the gates are keyed by a name the user chose:
their ``label`` when they gave one (``metrics={"precision@5": "P@5"}`` in Python, ``label:`` in a config,
``-m precision@5=P@5`` on the command line), else the spelling they asked (``hit_rate@5``). The metric
as evaluated (``P(rel=7)@5`` at ``min_relevance=7``) is recorded beside the label, never in its place, so
a threshold change never renames a key.

Example:
    >>> [(r.label, r.asked, str(r.metric)) for r in metric_requests({"precision@5": "P@5", "ndcg": "ndcg_burges@10"})]
    [('precision@5', 'P@5', 'P@5'), ('ndcg', 'ndcg_burges@10', 'nDCG(gain=exp)@10')]
    >>> [r.label for r in metric_requests(["hit_rate@5", "mrr"])]
    ['hit_rate@5', 'mrr']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from ..errors import InputError, MetricSpecError
from .spec import Metric, parse_metric

__all__ = ["MetricRequest", "MetricsArg", "metric_requests", "request", "conflict", "add_request", "find_request",
           "split_label", "FIX", "bad_metrics"]


@dataclass(frozen=True)
class MetricRequest:
    """One metric as asked for.

    Attributes:
        label: the name every output uses (means, per-query columns, reports, JSON, gates): the
            user's label, else the spelling asked.
        asked: the spelling as given (``hit_rate@5``; ``str(metric)`` when a :class:`Metric` was given).
        metric: the metric: as parsed before an evaluation (``Success@5``), as evaluated in its
            results (``P(rel=7)@5`` for ``P@5`` at relevance level 7).
    """

    label: str
    asked: str
    metric: Metric

    @property
    def names(self) -> tuple[str, ...]:
        """Every string that names this request exactly: its label, the spelling asked, the metric's canonical string."""
        return tuple(dict.fromkeys((self.label, self.asked, str(self.metric))))

    def with_metric(self, metric: Metric) -> MetricRequest:
        """The same request with ``metric`` (e.g. as an evaluation resolved it)."""
        return MetricRequest(self.label, self.asked, metric)

    def to_dict(self) -> dict[str, str]:
        """``{"label", "asked", "metric"}`` (the metric as its canonical string), as the JSON outputs record it."""
        return {"label": self.label, "asked": self.asked, "metric": str(self.metric)}


#: What the verbs accept as ``metrics``: one spec, several, ``{label: spec}``, or requests already made.
MetricsArg = Union[str, Metric, MetricRequest, Iterable[Union[str, Metric, MetricRequest]], Mapping[str, Union[str, Metric]]]


def request(spec: str | Metric | MetricRequest, *, label: str | None = None) -> MetricRequest:
    """One :class:`MetricRequest` from a spec (any spelling) and an optional label.

    Raises:
        MetricSpecError: the spec is not a metric.
        InputError: the label is not a non-empty string.
    """
    if isinstance(spec, MetricRequest):
        return spec if label is None else MetricRequest(_label(label), spec.asked, spec.metric)
    metric = parse_metric(spec)
    asked = spec.strip() if isinstance(spec, str) else str(metric)
    return MetricRequest(asked if label is None else _label(label), asked, metric)


def _label(label: Any) -> str:
    from ..common.names import check_name

    if not isinstance(label, str) or not label.strip():
        raise InputError(f"a metric label must be a non-empty string; got {label!r}.",
                         fix="write e.g. {'precision@5': 'P@5'} (label -> metric).")
    return check_name(label.strip(), "metric label")


def conflict(earlier: Sequence[MetricRequest], new: MetricRequest) -> str | None:
    """Why ``new`` cannot join ``earlier`` (None when it can): its label is already another metric's label,
    or it is the spelling or canonical string of another metric asked, or its own spelling is another
    metric's label (a look-up by that name would be ambiguous)."""
    for other in earlier:
        if other.metric == new.metric and other.label == new.label:
            continue
        if new.label == other.label and other.label != other.asked:
            return f"the label {new.label!r} is given twice ({other.asked} and {new.asked})"
        if new.label in other.names:
            return (f"the label {new.label!r} of {new.asked} is the name of another metric asked "
                    f"({other.label}: {other.metric})")
        if other.label in new.names and other.metric != new.metric:
            return (f"{new.asked} is named like the label {other.label!r} of another metric ({other.metric})")
    return None


#: how to fix a label that :func:`conflict` refuses
FIX = "give every metric its own label, different from the other metrics' names."


def add_request(requests: list[MetricRequest], new: MetricRequest) -> str | None:
    """Append ``new`` to ``requests`` (a list being built), unless it is a metric already there asked again
    without a label (kept once, under its first name); return why it cannot join (:func:`conflict`), else None."""
    if new.label == new.asked and any(r.metric == new.metric for r in requests):
        return None
    reason = conflict(requests, new)
    if reason is None and new not in requests:
        requests.append(new)
    return reason


def bad_metrics(metrics: object) -> MetricSpecError:
    """The error for a ``metrics`` argument that is neither a metric, nor several, nor ``{label: metric}``."""
    return MetricSpecError(f"metrics must be a metric like 'nDCG@10', a list of them or a mapping "
                           f"{{label: metric}}; got {type(metrics).__name__} {metrics!r:.60}.")


def metric_requests(metrics: MetricsArg) -> tuple[MetricRequest, ...]:
    """Every metric asked for, named, in order: the one preparation behind every verb's ``metrics`` argument.

    ``metrics`` is one spec (``"ndcg@10"``), several, a mapping ``{label: spec}``, or requests
    already made. A metric asked again without a label (``["P@5", "precision@5"]``) is kept once,
    under its first name (either spelling still finds it); the same label given twice, or a label that names another metric
    asked, is refused.

    Raises:
        MetricSpecError: a spec is not a metric, or no metric is asked.
        InputError: a label is empty, given twice, or names another metric asked.
    """
    if isinstance(metrics, Mapping):
        items = [request(spec, label=label) for label, spec in metrics.items()]
    elif isinstance(metrics, (str, Metric, MetricRequest)):
        items = [request(metrics)]
    elif isinstance(metrics, Iterable) and not isinstance(metrics, (bytes, bytearray)):
        items = [request(spec) for spec in metrics]
    else:
        raise bad_metrics(metrics)
    out: list[MetricRequest] = []
    for item in items:
        reason = add_request(out, item)
        if reason is not None:
            raise InputError(f"{reason}.", fix=FIX)
    if not out:
        raise MetricSpecError("no metric was asked for; pass e.g. ['nDCG@10', 'P@5'].")
    return tuple(out)


def find_request(requests: Sequence[MetricRequest], key: str | Metric | MetricRequest,
                 resolve: Any = None) -> MetricRequest | None:
    """The request ``key`` names: by label, then spelling asked, then canonical string, then as a metric
    (any spelling), then as ``resolve(metric)`` names it (e.g. with the evaluation's relevance level);
    a request as ``key`` by its label, else by its metric. None when no request matches."""
    if isinstance(key, MetricRequest):
        found = next((r for r in requests if r.label == key.label), None)
        if found is not None:
            return found
        key = key.metric
    if isinstance(key, str):
        for attribute in ("label", "asked"):
            found = next((r for r in requests if getattr(r, attribute) == key), None)
            if found is not None:
                return found
    try:
        metric = parse_metric(key)
    except MetricSpecError:
        return None
    found = next((r for r in requests if r.metric == metric), None)
    if found is None and resolve is not None:
        resolved = resolve(metric)
        found = next((r for r in requests if r.metric == resolved), None)
    return found


def split_label(text: str) -> tuple[str | None, str]:
    """A command-line metric ``LABEL=SPEC`` as ``(label, spec)``; ``(None, text)`` without a label.

    The text has a label when an ``=`` comes before any ``(`` (``P(rel=2)@5`` is a spec, not a label).

    >>> split_label("precision@5=P@5"), split_label("P(rel=2)@5")
    (('precision@5', 'P@5'), (None, 'P(rel=2)@5'))
    """
    head, sep, tail = text.partition("=")
    if not sep or "(" in head:
        return None, text
    return head.strip(), tail.strip()
