"""A report's sections beyond its means (standings, tiers, the analyses' results, slices), one list.

:func:`report_sections` says what a report holds of them, in order: for each, its key (its name in the JSON report),
its heading, its tables in any format that writes tables (terminal, Markdown, LaTeX, HTML:
:func:`evalbridge.views.formats.show`) and its data for a spreadsheet (CSV files at full precision: file name ->
DataFrame). A format writes each section its own way (:func:`section_tables` for the text formats, one CSV file per
table of data for ``csv``, ``to_dict()`` for JSON), so a new section is one entry here and shows in every format.
Each analysis's view declares its :data:`PLACES` (among the sections, or after the cross-checks): a format asks for
the sections of a place where it writes that place, and names no analysis.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .formats import ReportFormat, output_format, show, table_format
from .table import Table

__all__ = ["Section", "View", "VIEWS", "Headline", "PLACES", "AMONG_SECTIONS", "AFTER_CROSSCHECK", "report_sections",
           "report_data", "report_headlines", "section_tables", "section_files"]

#: A Report (read, never imported: this module is below the reports that render it).
AnyReport = Any


#: where a section goes in a report: among the report's sections (after the means, the comparison, the bands and the
#: gates: the standings, the analyses' sections, the slices), or right after the cross-checks (the terminal and
#: Markdown write the cross-checks after the sections, JSON and LaTeX, which shows none, before them; the page and
#: the notebook view after their cross-check)
AMONG_SECTIONS, AFTER_CROSSCHECK = "sections", "after_crosscheck"
PLACES = (AMONG_SECTIONS, AFTER_CROSSCHECK)

#: an analysis's headline numbers: the parts of each one's name (``("power", system, metric, "detectable")``) -> its
#: value; a tracker makes each part a valid name and joins them with dots (``power.dense.nDCG_at_10.detectable``)
Headline = dict[tuple[str, ...], float]


def _no_frames() -> Mapping[str, Any]:
    return {}


def _no_headline(found: Any) -> Headline:
    return {}


@dataclass(frozen=True)
class Section:
    """One section of a report.

    Attributes:
        key: its name in the JSON report (``standings``, ``tiers``, ``diffs``, ``power``, ``diagnosis``, ``uncertainty``,
            ``slices``).
        title: its heading (plain text; each format escapes it).
        tables: its tables as text of a format.
        frames: its data as DataFrames, by the stem of their CSV file; sections of one kind (every run diff) give
            the same stems, each frame saying whose it is, and a CSV folder holds them one after the other. None:
            the section's tables are its data.
        folded: a format that folds long sections (the page) shows it folded, opened by a click; False: open.
        per_query: its values query by query, one row each, which a report folder writes as ``KEY_per_query`` in
            each of its per-query formats (None: none beyond the systems' own per-query file).
    """

    key: str
    title: str
    tables: Callable[[ReportFormat], tuple[Table, ...]]
    frames: Callable[[], Mapping[str, Any]] | None = field(default=None)
    folded: bool = True
    per_query: Callable[[], Any] | None = None


def _standings(s: Any) -> Section:
    from .run_diff import standings_tables

    return Section("standings", "Across the systems", lambda fmt: standings_tables(s, fmt),
                   lambda: {f"standings_{table}": s.to_frame(table=table)
                            for table in ("pairs", "hardest", "mean_ranks", "ranks")})


def _tiers(t: Any) -> Section:
    from .tiers import tiers_tables

    return Section("tiers", "Tiers and rank intervals", lambda fmt: tiers_tables(t, fmt),
                   lambda: {f"tiers_{table}": t.to_frame(table=table) for table in ("systems", "pairs")})


def _topic_set(d: Any) -> Section:
    from .topic_set_size import topic_set_tables

    return Section("topic_set_size", "How many queries: collection design", lambda fmt: topic_set_tables(d, fmt),
                   lambda: {"topic_set_size": d.to_frame()})


def _agreement(a: Any) -> Section:
    """Two sets of judgements compared (the judge agreement's tables), and the system rankings they induce; its data
    as ``agreement.csv`` (one row, ``b vs a``) and, with runs, ``agreement_ranking.csv`` (one row per metric); each
    query's agreement as ``agreement_per_query``."""
    from .agreement_tables import agreement_tables

    first, second = a.judges.names
    return Section("agreement", f"Agreement between the judgements {first} and {second}",
                   lambda fmt: agreement_tables(a, fmt),
                   lambda: {"agreement": a.judges.to_frame().reset_index(),
                            **({"agreement_ranking": a.ranking.to_frame().reset_index()} if a.ranking.rows else {})},
                   folded=False, per_query=lambda: a.judges.per_query().reset_index())


def _diff(d: Any) -> Section:
    from .run_diff import diff_tables

    def frames() -> Mapping[str, Any]:
        out = {}
        for table in ("means", "queries", "documents"):
            frame = d.to_frame(table=table)
            frame.insert(0, "system", d.systems[1])
            frame.insert(0, "baseline", d.systems[0])
            out[f"diff_{table}"] = frame
        return out

    return Section("diffs", f"Diff: {d.systems[0]} -> {d.systems[1]}", lambda fmt: diff_tables(d, fmt), frames)


def _power(analysis: Any) -> Section:
    from .power_view import power_tables

    return Section("power", "Power", lambda fmt: power_tables(analysis, fmt), lambda: {"power": analysis.to_frame()},
                   folded=False)


def _diagnosis(d: Any, digits: int) -> Section:
    from .diagnosis import diagnosis_tables

    def frames() -> Mapping[str, Any]:
        import pandas as pd

        from .diagnosis import TITLES, meanings

        several = len(d.diagnoses) > 1  # a metric column, as the systems' and swaps' frames of several have
        found = [{**({"metric": one.metric} if several else {}), "finding": TITLES[name], "meaning": text}
                 for one in d.diagnoses for name, text in meanings(one).items()]
        return {"diagnosis_systems": d.to_frame(table="systems"), "diagnosis_swaps": d.to_frame(table="swaps"),
                "diagnosis_findings": pd.DataFrame(found, columns=[*(["metric"] if several else []), "finding",
                                                                   "meaning"])}

    return Section("diagnosis", "Diagnosis of the test collection",
                   lambda fmt: diagnosis_tables(d, fmt, digits), frames)


def _uncertainty(found: Mapping[str, Any], digits: int) -> Section:
    from .uncertainty import uncertainty_tables

    def frames() -> Mapping[str, Any]:
        import pandas as pd

        rows = [{name: value for name, value in u.to_dict().items() if name != "per_query"}
                | {"labellings": u.labellings if isinstance(u.labellings, int) else ", ".join(u.labellings),
                   "widening": u.widening}
                for measured in found.values() for u in measured.measured]
        return {"uncertainty": pd.DataFrame(rows)}

    return Section("uncertainty", "Uncertainty of the labels",
                   lambda fmt: uncertainty_tables([u for m in found.values() for u in m.measured], fmt, digits),
                   frames)


def _change(c: Any) -> Section:
    from .eval_sets import change_tables

    def frames() -> Mapping[str, Any]:
        import pandas as pd

        means = [{"metric": row.metric, "system": s, "before": a, "after": b}
                 for row in c.ranking.rows for s, a, b in zip(row.systems, row.means_a, row.means_b)]
        orders = [{"metric": row.metric, "kendall_tau": row.kendall_tau, "tau_ap": row.tau_ap,
                   "significant_before": row.significant_a, "significant_after": row.significant_b}
                  for row in c.ranking.rows]
        return {"changed_means": pd.DataFrame(means), "changed_orders": pd.DataFrame(orders)}

    return Section("changed", "What the judgements changed", lambda fmt: change_tables(c, fmt), frames)


def _ppi(r: Any, digits: int) -> Section:
    from .ppi import plan_tables, ppi_tables

    plan = r.planned  # the human labels a target needs, when asked (ppi: {plan_width})
    return Section("ppi", "Prediction-powered estimates",
                   lambda fmt: ppi_tables(r, fmt, digits) + (plan_tables(plan, fmt, digits) if plan else ()),
                   lambda: {"ppi": r.to_frame(), **({"ppi_plan": plan.to_frame()} if plan else {})})


def _fusion(c: Any, digits: int) -> Section:
    """The fused run (the comparison's first system, named by its recipe) against each of its parts."""
    from .comparison_table import comparison_view, differences_view

    return Section("fusion", f"Fusion: {c.systems[0]}",
                   lambda fmt: (comparison_view(c, fmt, c.marker_style(None), digits),
                                differences_view(c, fmt, digits)),
                   lambda: {f"fusion_{table}": c.to_frame(table=table) for table in ("systems", "pairs")})


def _judges(r: Any, digits: int) -> Section:
    from .judges import judges_tables

    return Section("judges", "The judges against the humans", lambda fmt: judges_tables(r, fmt, digits),
                   lambda: {"judges": r.to_frame()})


def _slices(report: AnyReport) -> Section:
    from .slices import report_tables

    def frames() -> Mapping[str, Any]:
        import pandas as pd

        out = {}
        numbers = [{"system": system, "field": n.field, "n": n.n, "mean": n.mean, "p50": n.p50, "p95": n.p95}
                   for system, r in report.results.items() for n in r.numbers]
        if numbers:
            out["logged"] = pd.DataFrame(numbers)
        if report.slices is not None:
            out |= {f"slices_{table}": report.slices.to_frame(table=table) for table in ("means", "differences")}
        return out

    return Section("slices", "Slices and logged numbers", lambda fmt: report_tables(report, fmt), frames)


def _has_slices(report: AnyReport) -> bool:
    return report.slices is not None or any(r.numbers for r in report.results.values())


def _diagnosis_data(d: Any) -> Any:
    from .diagnosis import diagnosis_data

    return diagnosis_data(d)


def _uncertainty_data(found: Mapping[str, Any]) -> Any:
    from .uncertainty import uncertainty_data

    return {s: uncertainty_data(u) for s, u in found.items()}


def _pair(system: str, baseline: str | None, first: str | None) -> str:
    """A system's name in a headline: itself against the first baseline, ``system vs baseline`` against another."""
    return system if baseline in (None, first) else f"{system} vs {baseline}"


def _power_headline(p: Any) -> Headline:
    """Each pair's smallest detectable difference and the queries its observed (or target) effect needs."""
    first = p.rows[0].baseline if p.rows else None
    out: Headline = {}
    for row in p.rows:
        name = ("power", _pair(row.system, row.baseline, first), row.metric)
        out[name + ("detectable",)] = row.mde
        if row.queries_needed is not None:
            out[name + ("queries_needed",)] = float(row.queries_needed)
    return out


def _tiers_headline(t: Any) -> Headline:
    """Each system's rank and rank interval, metric by metric."""
    return {("tiers", row.system, row.metric, stat): float(getattr(row, stat)) for row in t.rows
            for stat in ("rank", "rank_low", "rank_high")}


def _topic_set_headline(d: Any) -> Headline:
    """The queries each design needs, metric by metric (out of reach: not given)."""
    return {("topic_set_size", row.metric, design): float(getattr(row, design)) for row in d.rows
            for design in ("t_test", "anova", "ci") if getattr(row, design) is not None}


def _fusion_headline(c: Any) -> Headline:
    """The fused run's difference from each of its parts, metric by metric (the fused run is the comparison's first
    system; its recipe is the report's, the headline calls it fused)."""
    fused = c.systems[0]
    return {("fusion", f"fused vs {row.baseline}", row.metric, "delta"): float(row.delta) for row in c.rows
            if row.system == fused}


def _diagnosis_headline(d: Any) -> Headline:
    """The smallest difference the set can decide (several metrics: for each)."""
    found = d.diagnoses
    if len(found) == 1:
        return {("diagnose", "detectable"): d.detectable}
    return {("diagnose", one.metric, "detectable"): one.detectable for one in found}


def _ppi_headline(r: Any) -> Headline:
    """Each prediction-powered mean and difference (Δ = system - baseline) with its interval, and the difference's
    corrected p-value."""
    out: Headline = {}
    for row in r.rows:
        name = ("ppi", _pair(row.system, row.baseline, r.baseline), row.metric)
        kind = "mean" if row.kind == "mean" else "delta"
        out |= {name + (kind,): row.estimate, name + (f"{kind}_low",): row.low, name + (f"{kind}_high",): row.high}
        if row.p_adjusted is not None:
            out[name + ("p_adjusted",)] = row.p_adjusted
    return out


def _pool(p: Any) -> Section:
    from .eval_sets import pool_tables

    return Section("pool", "The pool: what to judge next", lambda fmt: pool_tables(p, fmt),
                   lambda: {"pool_runs": p.runs_frame().reset_index(), "pool_pairs": p.pairs_frame(),
                            **({"pool_strata": p.strata_frame().reset_index()} if p.strata else {})})


def _pool_headline(p: Any) -> Headline:
    """The pool's size at each depth and, sampled by strata, the pairs to judge."""
    out: Headline = {("pool", f"depth {d}", "pairs"): float(p.size(d)) for d in p.depths}
    if p.drawn is not None:
        out[("pool", "sampled")] = float(p.drawn.sampled.sum())
    return out


def _agreement_headline(a: Any) -> Headline:
    """The two judges' kappas, Krippendorff's alpha and shared pairs and, with runs, per metric the rank correlations
    of the system orders they induce and the pairs whose significance flipped (nan left out)."""
    judges = a.judges
    out: Headline = {("agreement", "pairs"): float(judges.shared_pairs), ("agreement", "kappa"): judges.cohen_kappa,
                     ("agreement", "quadratic_kappa"): judges.weighted_kappa,
                     ("agreement", "krippendorff_alpha"): judges.krippendorff_alpha}
    for row in a.ranking.rows:
        out |= {("agreement", row.metric, "kendall_tau"): row.kendall_tau, ("agreement", row.metric, "tau_ap"): row.tau_ap,
                ("agreement", row.metric, "flipped"): float(row.flipped)}
    return {name: float(value) for name, value in out.items() if value == value}


def _judges_headline(r: Any) -> Headline:
    """Each judge's kappas against the humans and, with runs, the tau_AP of its system order (nan left out)."""
    out: Headline = {}
    for card in r.cards:
        row = card.summary()
        for key in ("kappa", "linear_kappa", "quadratic_kappa", "tau_ap", "rerun_kappa"):
            if row[key] == row[key]:
                out[("judges", card.judge, key)] = row[key]
    return out


@dataclass(frozen=True)
class View:
    """How the result of one analysis (:data:`evalbridge.config.analyses.ANALYSES`) shows in a report.

    Attributes:
        key: its key in the JSON report.
        sections: its result (and the report's digits) -> its sections.
        data: its result -> its JSON data.
        headline: its result -> its headline numbers (:data:`Headline`), what a tracker logs of it; none when the
            analysis has no number that sums it up.
        place: where its sections and its data go in a report (:data:`PLACES`).
    """

    key: str
    sections: Callable[[Any, int], list[Section]]
    data: Callable[[Any], Any]
    headline: Callable[[Any], Headline] = _no_headline
    place: str = AMONG_SECTIONS


#: analysis key -> its view, for every analysis a report can hold (``Report.analyses``)
VIEWS: Mapping[str, View] = {
    "agreement": View("agreement", lambda a, digits: [_agreement(a)], lambda a: a.to_dict(), _agreement_headline,
                      place=AFTER_CROSSCHECK),
    "diff": View("diffs", lambda found, digits: [_diff(d) for d in found.values()],
                 lambda found: {system: d.to_dict() for system, d in found.items()}),
    "power": View("power", lambda p, digits: [_power(p)], lambda p: p.to_dict(), _power_headline),
    "tiers": View("tiers", lambda t, digits: [_tiers(t)], lambda t: t.to_dict(), _tiers_headline),
    "topic_set_size": View("topic_set_size", lambda d, digits: [_topic_set(d)], lambda d: d.to_dict(),
                           _topic_set_headline),
    "fusion": View("fusion", lambda c, digits: [_fusion(c, digits)], lambda c: c.to_dict(), _fusion_headline),
    "diagnose": View("diagnosis", lambda d, digits: [_diagnosis(d, digits)], _diagnosis_data, _diagnosis_headline),
    "uncertain": View("uncertainty", lambda found, digits: [_uncertainty(found, digits)], _uncertainty_data),
    "changed": View("changed", lambda c, digits: [_change(c)], lambda c: c.to_dict()),
    "ppi": View("ppi", lambda r, digits: [_ppi(r, digits)], lambda r: r.to_dict(), _ppi_headline),
    "judges": View("judges", lambda r, digits: [_judges(r, digits)], lambda r: r.to_dict(), _judges_headline),
    "pool": View("pool", lambda p, digits: [_pool(p)], lambda p: p.to_dict(), _pool_headline),
}


def report_sections(report: AnyReport, place: str = AMONG_SECTIONS) -> list[Section]:
    """The sections ``report`` holds at ``place`` (:data:`PLACES`), in the order every format shows them (none when
    it holds none of them): among the sections, the standings first and the slices last."""
    analysed = [section for key, found in report.analyses.items() if VIEWS[key].place == place
                for section in VIEWS[key].sections(found, report.digits)]
    if place != AMONG_SECTIONS:
        return analysed
    return ([_standings(report.standings)] if report.standings is not None else []) + analysed + (
        [_slices(report)] if _has_slices(report) else [])


def report_data(report: AnyReport, place: str = AMONG_SECTIONS) -> dict[str, Any]:
    """The JSON data of the analyses ``report`` holds at ``place`` (:data:`PLACES`), each under its view's key."""
    return {VIEWS[key].key: VIEWS[key].data(found) for key, found in report.analyses.items()
            if VIEWS[key].place == place}


def report_headlines(report: AnyReport) -> Headline:
    """The headline numbers of the analyses ``report`` holds (those that have one), in the registry's order."""
    out: Headline = {}
    for key, found in report.analyses.items():
        if found is not None:
            out |= VIEWS[key].headline(found)
    return out


def section_tables(report: AnyReport, fmt: str, heading: Callable[[str], list[str]], *,
                   place: str = AMONG_SECTIONS) -> list[str]:
    """The lines a report in the format called ``fmt`` shows of its sections at ``place`` (:data:`PLACES`): each
    one's ``heading`` (the lines of a heading in that format, given the escaped title) and its tables."""
    written = table_format(fmt)
    lines: list[str] = []
    for section in report_sections(report, place):
        lines += heading(written.escape(section.title)) + [show(section.tables(written), fmt).rstrip("\n")]
    return lines


def section_files(report: AnyReport, fmt: str) -> dict[str, list[Any]]:
    """The data of ``report``'s sections for a folder of files, those after the cross-checks first: file stem -> the
    DataFrames written to it, in order (a section without data of its own gives each of its tables, as written by
    the format called ``fmt``, as a DataFrame of text: ``KEY_1``, ``KEY_2``, ...)."""
    import pandas as pd

    files: dict[str, list[Any]] = {}
    for section in report_sections(report, AFTER_CROSSCHECK) + report_sections(report):
        if section.frames is not None:
            for stem, frame in section.frames().items():
                files.setdefault(stem, []).append(frame)
            continue
        for i, table in enumerate(section.tables(output_format(fmt)), start=1):
            files.setdefault(f"{section.key}_{i}", []).append(pd.DataFrame(list(table.rows),
                                                                           columns=list(table.headers)))
    return files
