"""Nothing a user reads names the internal source documents ("seed 001"): help, reports, configs, docs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import evalbridge as eb
from evalbridge.cli import build_parser
from evalbridge.reports.report import QUALITY_BANDS, Report, render

ROOT = Path(__file__).resolve().parents[1]
INTERNAL = re.compile(r"\bseed[ _]?00\d\b", re.IGNORECASE)


def _help_texts() -> dict[str, str]:
    parser = build_parser()
    texts = {"evalbridge --help": parser.format_help()}
    for action in parser._subparsers._group_actions:  # noqa: SLF001 - argparse keeps subparsers there
        for name, sub in action.choices.items():
            texts[f"evalbridge {name} --help"] = sub.format_help()
    return texts


def _pages() -> dict[str, str]:
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "configs").glob("*.yaml"),
             *(ROOT / "notebooks").glob("*.ipynb"), ROOT / "bench" / "README.md"]
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in files}


def _docstrings() -> dict[str, str]:
    import importlib
    import pkgutil

    out = {}
    for module in pkgutil.walk_packages(eb.__path__, "evalbridge."):
        if module.name.endswith(("_ranx_sort", "spark")):
            continue
        mod = importlib.import_module(module.name)
        out[module.name] = "\n".join(filter(None, [mod.__doc__, *(getattr(v, "__doc__", "") or ""
                                                                   for v in vars(mod).values()
                                                                   if getattr(v, "__module__", None) == module.name)]))
    return out


def _report_texts() -> dict[str, str]:
    res = eb.evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}}, {"q1": {"d1": 0.9}, "q2": {"d3": 0.5}}, ["P@1", "ndcg@5"])
    report = Report(results={"a": res, "b": res}, bands=QUALITY_BANDS)
    return {f"report ({fmt})": render(report, fmt) for fmt in ("terminal", "markdown", "csv", "json", "latex")}


@pytest.mark.parametrize("where, text", [*_help_texts().items(), *_pages().items(), *_report_texts().items(),
                                         *_docstrings().items()])
def test_no_internal_wording_reaches_a_user(where: str, text: str) -> None:
    """Help texts, reports, configs, README, docs, notebooks and docstrings never say "seed 00x"."""
    found = INTERNAL.findall(text)
    assert not found, f"{where} says {found[:3]}"
