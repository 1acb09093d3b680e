"""The plot gallery of docs/config.md: one PNG per plot kind, drawn from the real TREC DL 2019 passage runs.

Reads the qrels and three runs (BM25, BM25+RM3, SPLADE++ ED; 43 judged queries) from
``../shared/data/real/trec-dl-2019-passage`` with :func:`evalbridge.read_qrels` / ``read_run``,
evaluates them at relevance level 2 (the track's level for binary metrics) and writes, through
the public plotting API (:mod:`evalbridge.reports.plots`), what an ``output.plots`` section of a
config writes:

* ``distribution.png``: per-query nDCG@10, one box per system;
* ``hit_share.png``: a binary metric, Success@3, as the share of queries with a hit;
* ``cutoff_curves.png``: the exact variant ``nDCG(gain=exp)`` at k = 1 ... 100;
* ``differences.png``: per-query nDCG@10 of each system minus BM25's.

Usage::

    python tools/plot_gallery.py                 # rewrite docs/img/*.png
    python tools/plot_gallery.py --out /tmp/img  # somewhere else
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "real" / "trec-dl-2019-passage"
OUT = ROOT / "docs" / "img"
#: system name -> run file in DATA (the first one is the baseline)
RUNS = {"bm25": "run.bm25.top100.txt", "bm25-rm3": "run.bm25-rm3.top100.txt",
        "splade-pp-ed": "run.splade-pp-ed.top100.txt"}
LEVEL = 2
CUTOFFS = (1, 3, 5, 10, 20, 50, 100)


def _values(inputs: Mapping[str, Any], metric: str) -> tuple[str, dict[str, dict[str, float]]]:
    """(the metric's label as evaluated, system -> per-query values)."""
    import evalbridge as eb

    results = {name: eb.evaluate(qrels, run, metric, min_relevance=LEVEL) for name, (qrels, run) in inputs.items()}
    first = next(iter(results.values()))
    return str(first.resolve(metric)), {name: res.query(metric) for name, res in results.items()}


def distribution(inputs: Mapping[str, Any], stem: Path) -> list[Path]:
    from evalbridge.reports.plots import plot_distribution

    label, values = _values(inputs, "nDCG@10")
    return plot_distribution(values, label, stem)


def hit_share(inputs: Mapping[str, Any], stem: Path) -> list[Path]:
    from evalbridge.reports.plots import plot_distribution

    label, values = _values(inputs, "Success@3")
    return plot_distribution(values, label, stem)


def cutoff_curves(inputs: Mapping[str, Any], stem: Path) -> list[Path]:
    from evalbridge.reports.plots import cutoff_curves as curves_of, plot_cutoff_curves

    variant = "nDCG(gain=exp)"
    curves = {name: curves_of(qrels, run, variant, CUTOFFS, min_relevance=LEVEL)
              for name, (qrels, run) in inputs.items()}
    return plot_cutoff_curves(curves, variant, stem)


def differences(inputs: Mapping[str, Any], stem: Path) -> list[Path]:
    from evalbridge.reports.plots import plot_differences

    label, values = _values(inputs, "nDCG@10")
    return plot_differences(values, next(iter(inputs)), label, stem)


#: plot kind -> (file stem, what draws it)
KINDS: dict[str, tuple[str, Callable[[Mapping[str, Any], Path], list[Path]]]] = {
    "distribution": ("distribution", distribution),
    "binary hit share": ("hit_share", hit_share),
    "cutoff curves of a variant": ("cutoff_curves", cutoff_curves),
    "differences": ("differences", differences),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help=f"the DL 2019 folder (default {DATA})")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the PNGs go (default {OUT})")
    args = parser.parse_args(argv)
    import evalbridge as eb

    qrels = eb.read_qrels(args.data / "qrels.dl19-passage.txt")
    inputs = {name: (qrels, eb.read_run(args.data / file, name=name)) for name, file in RUNS.items()}
    for kind, (stem, draw) in KINDS.items():
        for path in draw(inputs, args.out / stem):
            print(f"{kind}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
