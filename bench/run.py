"""Benchmark evalbridge's default backend against ranx, ir-measures, pytrec_eval and a plain Python loop.

Usage::

    .venv/bin/python bench/run.py            # full: sizes a-d (7M-row files, 10M-row dicts), ~15-25 min
    .venv/bin/python bench/run.py --quick    # small sizes only, < 2 min
    .venv/bin/python bench/run.py --doors    # only the doors at size c (7M rows), ~10 min

Every measurement runs in a fresh subprocess (``--worker``): the input is built there first
(not timed), the libraries are imported (not timed, except in the startup rows), then the
task runs ``reps`` times after a warm-up call; the medians, the ratios against the anchors of
the same run, and the peak memory growth (``VmHWM`` reset through ``/proc/self/clear_refs``) are
printed and written to ``bench/results/<mode>-<date>.md``. Data come from :mod:`data` (fixed seed)
and are cached in ``$TMPDIR/evalbridge_bench``. Speed is never asserted in the unit tests.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

#: name -> (queries, docs per query)
SIZES = {"a": (100, 10), "b": (10_000, 100), "c": (7_000, 1_000), "d": (100_000, 100),
         "b_quick": (1_000, 100), "c_quick": (300, 1_000)}
METRICS = ["nDCG@10", "AP", "R@100", "RR@10", "P@10"]
TWENTY = ["P@1", "P@3", "P@5", "P@10", "P@20", "P@100", "R@10", "R@100", "R@1000", "RR", "RR@10", "AP", "AP@100",
          "nDCG", "nDCG@5", "nDCG@10", "nDCG@20", "nDCG(gain=exp)@10", "Rprec", "Success@10"]
CACHE = Path(tempfile.gettempdir()) / "evalbridge_bench"


# ---------------------------------------------------------------- inputs (built inside the workers)

def dicts(size: str) -> tuple[dict, dict]:
    """``(qrels, run)`` dict-of-dicts of a size, cached as a pickle next to the files."""
    import pickle

    import data

    path = CACHE / f"{size}.pickle"
    if path.exists():
        with path.open("rb") as f:
            return pickle.load(f)
    pair = data.to_dicts(data.generate(*SIZES[size], seed=7, name=size))
    CACHE.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        pickle.dump(pair, f, protocol=pickle.HIGHEST_PROTOCOL)
    return pair


def files(size: str) -> tuple[Path, Path]:
    """TREC ``qrels.txt`` and ``run.txt`` of a size (written once)."""
    import data

    folder = CACHE / size
    if not (folder / "run.txt").exists():
        data.write_trec(data.generate(*SIZES[size], seed=7, name=size), folder)
    return folder / "qrels.txt", folder / "run.txt"


def door_inputs(size: str) -> dict[str, Path]:
    """The same data at every door of a size (written once): TREC files, Parquet tables (read into Arrow
    or pandas before the clock starts), a config file, a RAG JSON Lines log."""
    import data

    qrels_path, run_path = files(size)
    folder = CACHE / size
    paths = {"qrels": qrels_path, "run": run_path, "qrels_table": folder / "qrels.parquet",
             "run_table": folder / "run.parquet", "config": folder / "eval.yaml", "log": folder / "log.jsonl"}
    if not paths["log"].exists():
        import pyarrow.parquet as pq

        dataset = data.generate(*SIZES[size], seed=7, name=size)
        for table, path in zip(data.to_arrow(dataset), (paths["qrels_table"], paths["run_table"])):
            pq.write_table(table, path)
        paths["config"].write_text(f"qrels: {qrels_path.name}\nruns:\n  bench: {run_path.name}\n"
                                   f"metrics: {METRICS}\noutput: {{dir: report, formats: [json], per_query: []}}\n")
        data.write_rag_log(dataset, paths["log"].with_suffix(".tmp")).rename(paths["log"])
    return paths


# ---------------------------------------------------------------- the contenders

def naive(qrels: dict, run: dict) -> dict[str, float]:
    """A blog-style loop: sort each query (score desc, doc id desc as trec_eval), then count."""
    import math

    sums = dict.fromkeys(METRICS, 0.0)
    for qid, grades in qrels.items():
        scores = run.get(qid, {})
        ranked = [d for _, d in sorted(((s, d) for d, s in scores.items()), reverse=True)]
        rels = [grades.get(d, 0) for d in ranked]
        n_rel = sum(1 for g in grades.values() if g >= 1)
        hits, ap, rr = 0, 0.0, 0.0
        for i, g in enumerate(rels, 1):
            if g >= 1:
                hits += 1
                ap += hits / i
                if not rr and i <= 10:
                    rr = 1 / i
        dcg = sum(g / math.log2(i + 1) for i, g in enumerate(rels[:10], 1) if g > 0)
        ideal = sorted(grades.values(), reverse=True)[:10]
        idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1) if g > 0)
        sums["nDCG@10"] += dcg / idcg if idcg else 0.0
        sums["AP"] += ap / n_rel if n_rel else 0.0
        sums["R@100"] += sum(1 for g in rels[:100] if g >= 1) / n_rel if n_rel else 0.0
        sums["RR@10"] += rr
        sums["P@10"] += sum(1 for g in rels[:10] if g >= 1) / 10
    return {m: s / len(qrels) for m, s in sums.items()}


def pytrec(qrels: dict, run: dict) -> dict[str, float]:
    """pytrec_eval: ndcg_cut.10, map, recall.100, P.10 and recip_rank (RR@10 = rr if rr >= 0.1)."""
    import pytrec_eval

    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recall.100", "recip_rank",
                                                       "P.10"}).evaluate(run)
    keys = {"nDCG@10": "ndcg_cut_10", "AP": "map", "R@100": "recall_100", "P@10": "P_10"}
    n = len(per_query)
    means = {m: sum(v[k] for v in per_query.values()) / n for m, k in keys.items()}
    means["RR@10"] = sum(v["recip_rank"] if v["recip_rank"] >= 0.1 else 0.0 for v in per_query.values()) / n
    return means


def irm(qrels: dict, run: dict) -> dict[str, float]:
    """ir-measures' default pipeline (``calc_aggregate``)."""
    import ir_measures

    return {str(k): v for k, v in ir_measures.calc_aggregate(list(map(ir_measures.parse_measure, METRICS)),
                                                             qrels, run).items()}


def ranx_eval(qrels: dict, run: dict) -> dict[str, float]:
    """ranx from dicts: Qrels/Run construction plus ``evaluate``."""
    import ranx

    return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["ndcg@10", "map", "recall@100", "mrr@10",
                                                             "precision@10"])


def evalbridge_eval(qrels: object, run: object, metrics: list[str] = METRICS) -> dict[str, float]:
    """evalbridge's default backend, from whatever the user has (dicts or file paths)."""
    import evalbridge

    return evalbridge.evaluate(qrels, run, metrics).means


def evalbridge_backend(name: str):  # noqa: ANN201
    def call(qrels: object, run: object) -> dict[str, float]:
        import evalbridge

        return evalbridge.evaluate(qrels, run, METRICS, backend=name).means
    return call


def read_then_evaluate(qrels_path: str, run_path: str) -> dict[str, float]:
    """The reading door: ``read_qrels`` and ``read_run`` (objects a user keeps), then ``evaluate``."""
    import evalbridge

    return evalbridge.evaluate(evalbridge.read_qrels(qrels_path), evalbridge.read_run(run_path), METRICS).means


def ids_as_strings(qrels: object, run: object) -> dict[str, float]:
    """The Arrow door with int doc ids read as strings (``ids="str"``, what a ``chunk_id`` column beside string
    ids needs): ``read_qrels`` / ``read_run`` with the option, then ``evaluate``."""
    import evalbridge

    return evalbridge.evaluate(evalbridge.read_qrels(qrels, ids="str"), evalbridge.read_run(run, ids="str"),
                               METRICS).means


def ranks_door(qrels: object, run: object) -> dict[str, float]:
    """The Arrow door with a run of ranks (``rank`` column, 1 = best, no score): ``read_run(run, rank="rank")``,
    which turns them into scores ``max_rank + 1 - rank`` per query, then ``evaluate``."""
    import evalbridge

    return evalbridge.evaluate(qrels, evalbridge.read_run(run, rank="rank"), METRICS).means


def cli_eval(qrels_path: str, run_path: str) -> dict:
    """``evalbridge eval QRELS RUN -m ...`` in this process (the report goes to a file)."""
    from evalbridge.cli import main

    return {"exit": main(["eval", qrels_path, run_path, "-m", *METRICS, "-o", str(CACHE / "cli-eval.txt")])}


def cli_run(config_path: str) -> dict:
    """``evalbridge run eval.yaml`` in this process (a JSON report and the provenance are written)."""
    from evalbridge.cli import main

    return {"exit": main(["run", config_path, "-q"])}


def rag_log(log_path: str) -> dict[str, float]:
    """A RAG JSON Lines log: ``read_pair`` then ``evaluate``."""
    import evalbridge

    return evalbridge.evaluate(*evalbridge.read_pair(log_path), METRICS).means


def json_lines(log_path: str) -> dict:
    """Parsing alone: ``json.loads`` of every line of the log, nothing kept."""
    import json

    with open(log_path, "rb") as f:
        return {"lines": sum(1 for line in f if json.loads(line))}


def orjson_lines(log_path: str) -> dict:
    """Parsing alone with orjson (what the RAG door parses with)."""
    import orjson

    with open(log_path, "rb") as f:
        return {"lines": sum(1 for line in f if orjson.loads(line))}


def crosscheck(qrels: object, run: object) -> dict:
    import evalbridge

    return {"ok": evalbridge.crosscheck(qrels, run, METRICS, backends=("ranx", "ir_measures", "pytrec_eval")).ok}


def irm_files(qrels_path: Path, run_path: Path) -> dict[str, float]:
    """The best anchor path from files: ir-measures' readers to dicts, then pytrec_eval."""
    import ir_measures

    qrels: dict = {}
    for row in ir_measures.read_trec_qrels(str(qrels_path)):
        qrels.setdefault(row.query_id, {})[row.doc_id] = row.relevance
    run: dict = {}
    for row in ir_measures.read_trec_run(str(run_path)):
        run.setdefault(row.query_id, {})[row.doc_id] = row.score
    return pytrec(qrels, run)


def ranx_files(qrels_path: Path, run_path: Path) -> dict[str, float]:
    import ranx

    return ranx.evaluate(ranx.Qrels.from_file(str(qrels_path), kind="trec"),
                         ranx.Run.from_file(str(run_path), kind="trec"),
                         ["ndcg@10", "map", "recall@100", "mrr@10", "precision@10"])


def floor(qrels_path: Path, run_path: Path) -> dict[str, float]:
    """The floor: pyarrow reads both files, run doc ids are looked up in the qrels', one vectorised pass."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    def read(path: Path, names: list[str], keep: dict) -> pa.Table:
        return csv.read_csv(path, read_options=csv.ReadOptions(column_names=names),
                            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
                            convert_options=csv.ConvertOptions(column_types=keep, include_columns=list(keep)))

    qrels = read(qrels_path, ["q", "i", "d", "g"], {"d": pa.string(), "g": pa.float64()})
    run = read(run_path, ["q", "z", "d", "r", "s", "t"], {"q": pa.string(), "d": pa.string(), "s": pa.float64()})
    found = pc.fill_null(pc.index_in(run["d"], value_set=qrels["d"].combine_chunks()), -1).to_numpy()
    gain = (found >= 0) * run["s"].to_numpy()
    return {"sum": float(np.cumsum(gain)[-1])}


# ---------------------------------------------------------------- workers

def _status(field: str) -> int:
    """A ``/proc/self/status`` field in bytes (0 where there is no /proc)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def measured(call: Callable[[], Any]) -> tuple[dict[str, float], Any]:
    """One timed call, its input built before: ``({"seconds": wall, "peak_mib": peak RSS growth}, its result)``
    (``VmHWM`` reset through ``/proc/self/clear_refs``, minus the RSS before the call)."""
    _reset_peak()
    before = _status("VmRSS")
    start = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_mib": max(0, _status("VmHWM") - before) / 2 ** 20}, result


def repeated(call: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(median wall seconds, largest peak RSS growth in MiB) of ``repeat`` calls of ``call`` in this process, after
    one warm-up call (first-call imports and numba's or scipy's compilation are not timed); each as :func:`measured`."""
    call()
    found = [measured(call)[0] for _ in range(repeat)]
    return statistics.median(m["seconds"] for m in found), max(m["peak_mib"] for m in found)


def interleaved(script: str, rows: Iterable[str], arguments: Sequence[str], repeat: int) -> \
        tuple[dict[str, float], dict[str, float], dict[str, list[dict[str, Any]]]]:
    """Each row measured in ``repeat`` fresh workers (``script --worker ROW *arguments``, which prints its numbers as
    one JSON line last), the rows interleaved so that a busy moment of the machine does not fall on one row: the
    median seconds and peak MiB of each row, and every worker's numbers."""
    rows = list(rows)
    found: dict[str, list[dict[str, Any]]] = {row: [] for row in rows}
    for _ in range(repeat):
        for row in rows:
            out = subprocess.run([sys.executable, script, "--worker", row, *arguments], capture_output=True,
                                 text=True, check=True)
            found[row].append(json.loads(out.stdout.strip().splitlines()[-1]))
    seconds = {row: statistics.median(m["seconds"] for m in got) for row, got in found.items()}
    peak = {row: statistics.median(m["peak_mib"] for m in got) for row, got in found.items()}
    return seconds, peak, found


def against(seconds: dict[str, float], peak: dict[str, float], rows: Iterable[str], base: str) -> list[str]:
    """The Markdown table of each row's median wall time and peak growth, each beside its ratio to ``base``'s (``-``
    where ``base`` grew no memory)."""
    lines = [f"| row | wall (median) | x {base} | peak growth | x {base} |", "|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row} | {seconds[row]:.2f} s | {seconds[row] / seconds[base]:.2f} | {peak[row]:,.0f} MiB | "
                     + (f"{peak[row] / peak[base]:.2f} |" if peak[base] else "- |"))
    return lines


def written(stem: str, title: str, size: str, lines: Sequence[str], repeat: int) -> str:
    """A bench's report (its title and the time, the size, the table, the machine and the workers per row), printed
    and written to ``results/<stem>-<date>.md``."""
    text = (f"# {title}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n\n{size}\n\n"
            + "\n".join(lines) + f"\n\n{machine()}; {repeat} workers per row\n")
    print(text)
    (HERE / "results" / f"{stem}-{datetime.date.today().isoformat()}.md").write_text(text)
    return text


def load_input(kind: str, size: str) -> tuple:
    """The arguments of a task, built before the clock starts (files are read into the page cache)."""
    if kind == "dicts":
        return dicts(size)
    if kind == "files":
        args = warm = tuple(map(str, files(size)))
    elif kind in ("arrow", "pandas", "arrow_shuffled", "arrow_int_ids", "arrow_ranks"):
        import numpy as np
        import pyarrow.parquet as pq

        paths = door_inputs(size)
        tables = tuple(pq.read_table(paths[k]) for k in ("qrels_table", "run_table"))
        if kind == "arrow_shuffled":  # rows in no order, as a table out of a join or a SQL query may come
            tables = tuple(t.take(np.random.default_rng(7).permutation(t.num_rows)) for t in tables)
        if kind == "arrow_int_ids":  # doc ids as int64 ("d17" -> 17), as a chunk_id column holds them
            import pyarrow as pa
            import pyarrow.compute as pc

            tables = tuple(t.set_column(1, "doc_id", pc.cast(pc.utf8_slice_codeunits(t["doc_id"], 1), pa.int64()))
                           for t in tables)
        if kind == "arrow_ranks":  # the run's ranks instead of its scores: the TREC file's rank column
            import pyarrow as pa
            import pyarrow.compute as pc

            run = tables[1]  # in the engine's order (score desc, ties by doc id desc), so the ranks give its ranking
            run = run.take(pc.sort_indices(run, sort_keys=[("query_id", "ascending"), ("score", "descending"),
                                                           ("doc_id", "descending")]))
            queries = run["query_id"].combine_chunks()
            change = pc.not_equal(queries.slice(1), queries.slice(0, len(queries) - 1)).to_numpy(zero_copy_only=False)
            starts = np.r_[0, np.flatnonzero(change) + 1]
            lengths = np.diff(np.r_[starts, len(queries)])
            rank = np.arange(len(queries)) - np.repeat(starts, lengths) + 1
            tables = (tables[0], pa.table({"query_id": queries, "doc_id": run["doc_id"], "rank": rank}))
        return tables if kind != "pandas" else tuple(t.to_pandas() for t in tables)
    else:  # "config", "log": one path (a config names the TREC files)
        paths = door_inputs(size)
        args = (str(paths[kind]),)
        warm = args + ((str(paths["qrels"]), str(paths["run"])) if kind == "config" else ())
    for path in warm:  # into the page cache
        Path(path).read_bytes()
    return args


def worker(spec: dict) -> dict:
    """Build the input, import, warm up, then time ``reps`` calls; report times and memory."""
    task = {"evalbridge": evalbridge_eval, "pytrec_eval": pytrec, "ir_measures": irm, "ranx": ranx_eval,
            "naive": naive, "irm_files": irm_files, "ranx_files": ranx_files, "floor": floor,
            "crosscheck": crosscheck, "twenty": lambda q, r: evalbridge_eval(q, r, TWENTY),
            "eb_ranx": evalbridge_backend("ranx"), "eb_ir_measures": evalbridge_backend("ir_measures"),
            "eb_pytrec_eval": evalbridge_backend("pytrec_eval"), "read_then_evaluate": read_then_evaluate,
            "cli_eval": cli_eval, "cli_run": cli_run, "ids_as_strings": ids_as_strings, "ranks_door": ranks_door,
            "rag_log": rag_log, "json_lines": json_lines,
            "orjson_lines": orjson_lines}[spec["task"]]
    args = load_input(spec["input"], spec["size"])
    for module in spec.get("imports", []):
        __import__(module)
    times, cpu, growth = [], [], []
    base = _status("VmRSS")
    for i in range(spec["reps"] + spec["warmup"]):
        _reset_peak()
        before = _status("VmRSS")
        start, start_cpu = time.perf_counter(), time.process_time()
        value = task(*args)
        elapsed, used = time.perf_counter() - start, time.process_time() - start_cpu
        growth.append(_status("VmHWM") - before)
        times.append(elapsed)
        cpu.append(used)
        del value
    timed = times[spec["warmup"]:]
    return {"median": statistics.median(timed), "times": timed, "first": times[0], "peak_growth": max(growth),
            "input_rss": base, "cpu": cpu[spec["warmup"]:]}


STARTUP = {
    "evalbridge": "import evalbridge\nevalbridge.evaluate(q, r, {m})",
    "pytrec_eval": "import pytrec_eval\npytrec_eval.RelevanceEvaluator(q, {{'ndcg_cut.10', 'map', 'recall.100', "
                   "'recip_rank', 'P.10'}}).evaluate(r)",
    "ir_measures": "import ir_measures\nir_measures.calc_aggregate([ir_measures.parse_measure(x) for x in {m}], q, r)",
    "ranx": "import ranx\nranx.evaluate(ranx.Qrels(q), ranx.Run(r), ['ndcg@10', 'map', 'recall@100', 'mrr@10', "
            "'precision@10'])",
    "naive": "import sys\nsys.path.insert(0, {here!r})\nfrom run import naive\nnaive(q, r)",
    "python": "pass",
}


def startup(name: str, reps: int, env: dict | None = None) -> dict:
    """Wall time of a fresh interpreter that imports a library and evaluates the 100 x 10 input."""
    qrels, run = dicts("a")
    source = CACHE / "a.json"
    source.write_text(json.dumps([qrels, run]))
    body = STARTUP[name].format(m=METRICS, here=str(HERE))
    code = f"import json\nq, r = json.load(open({str(source)!r}))\n{body}\n" if name != "python" else body
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, **(env or {})},
                       stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return {"median": statistics.median(times), "times": times, "first": times[0], "peak_growth": 0, "input_rss": 0}


def merge(results: dict, key: tuple[str, str], got: dict) -> None:
    """Pool the runs of one more measurement of ``key`` into ``results``."""
    old = results.get(key)
    if old is None or "error" in got or "error" in old:
        results[key] = got if old is None or "error" in got else old
        return
    times = old["times"] + got["times"]
    results[key] = {"median": statistics.median(times), "times": times, "first": old["first"],
                    "peak_growth": max(old["peak_growth"], got["peak_growth"]), "input_rss": old["input_rss"],
                    "cpu": old.get("cpu", []) + got.get("cpu", [])}


def spawn(spec: dict) -> dict:
    """Run one worker in a fresh interpreter."""
    done = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], capture_output=True, text=True)
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- the plan and the report

#: The doors of one input (label -> (task, input)): every way in, measured on the same data.
DOORS = {
    "evaluate(paths)": ("evalbridge", "files"),
    "read_qrels + read_run, evaluate": ("read_then_evaluate", "files"),
    "pandas DataFrames, evaluate": ("evalbridge", "pandas"),
    "Arrow tables, evaluate": ("evalbridge", "arrow"),
    "Arrow tables, rows in no order, evaluate": ("evalbridge", "arrow_shuffled"),
    "Arrow tables, int doc ids, ids='str', evaluate": ("ids_as_strings", "arrow_int_ids"),
    "Arrow tables, a run of ranks, rank='rank', evaluate": ("ranks_door", "arrow_ranks"),
    "evalbridge eval": ("cli_eval", "files"),
    "evalbridge run config": ("cli_run", "config"),
    "RAG JSONL log, read_pair + evaluate": ("rag_log", "log"),
    "json.loads per line (parsing alone)": ("json_lines", "log"),
    "orjson.loads per line (parsing alone)": ("orjson_lines", "log"),
    "floor": ("floor", "files"),
}
#: The doors held to 1.3 x evaluate(paths) in time and 1.5 x in peak memory (a table whose rows are in no
#: order is measured too, for what sorting them costs, and held to no goal).
HELD = ("read_qrels + read_run, evaluate", "pandas DataFrames, evaluate", "Arrow tables, evaluate",
        "Arrow tables, int doc ids, ids='str', evaluate", "Arrow tables, a run of ranks, rank='rank', evaluate",
        "evalbridge eval",
        "evalbridge run config")


def door_steps(size: str) -> list[tuple[str, str, dict]]:
    """The doors of ``size`` (:data:`DOORS`), each in its own worker with the same libraries imported first."""
    return [(f"doors {size}", label, {"task": task, "size": size, "input": kind, "reps": 2, "warmup": 1,
                                      "imports": ["evalbridge", "numpy", "pyarrow.csv", "pyarrow.compute", "pandas"]})
            for label, (task, kind) in DOORS.items()]


def plan(quick: bool, doors_only: bool = False) -> list[tuple[str, str, dict]]:
    """(group, label, spec): what to measure in this mode."""
    b, c = ("b_quick", "c_quick") if quick else ("b", "c")
    if doors_only:
        return door_steps(c)
    reps = {"a": 20, b: 3 if quick else 5, c: 3, "d": 3}
    steps: list[tuple[str, str, dict]] = []
    imports = {"evalbridge": ["evalbridge"], "pytrec_eval": ["pytrec_eval"], "ir_measures": ["ir_measures"],
               "ranx": ["ranx"], "naive": []}
    for size in ("a", b) + (() if quick else ("d",)):
        for task in ("evalbridge", "pytrec_eval", "ir_measures", "ranx", "naive"):
            if task in ("ir_measures", "ranx") and size == "d" and quick:
                continue
            steps.append((f"dicts {size}", task, {"task": task, "size": size, "input": "dicts", "reps": reps[size],
                                                  "warmup": 1, "imports": imports[task]}))
    for task in ("evalbridge", "irm_files", "floor") + (("ranx_files",) if not quick else ()):
        steps.append((f"files {c}", task, {"task": task, "size": c, "input": "files", "reps": reps[c],
                                           "warmup": 1 if task != "ranx_files" else 0,
                                           "imports": ["evalbridge", "numpy", "pyarrow.csv", "pyarrow.compute"]
                                           if task != "irm_files" else ["ir_measures", "pytrec_eval"]}))
    for task in ("evalbridge", "twenty"):
        steps.append((f"metrics {b}", "1 metric" if task == "evalbridge" else "20 metrics",
                      {"task": "evalbridge" if task == "evalbridge" else "twenty", "size": b, "input": "dicts",
                       "reps": reps[b], "warmup": 1, "imports": ["evalbridge", "numpy"]}))
    cross = "a" if quick else b
    libraries = {"crosscheck": ["ranx", "ir_measures", "pytrec_eval", "pandas"], "eb_ranx": ["ranx"],
                 "eb_ir_measures": ["ir_measures"], "eb_pytrec_eval": ["pytrec_eval"]}
    for task, needed in libraries.items():
        steps.append((f"cross-check {cross}", task, {"task": task, "size": cross, "input": "dicts",
                                                    "reps": 3, "warmup": 1, "imports": ["evalbridge", *needed]}))
    return steps + door_steps(c)


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else "?"
    memory = next((round(int(line.split()[1]) / 1024 ** 2) for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal")), 0) if Path("/proc/meminfo").exists() else "?"
    versions = []
    for module in ("evalbridge", "numpy", "pyarrow", "ranx", "ir_measures", "pytrec_eval"):
        try:
            from importlib.metadata import version

            versions.append(f"{module} {version(module.replace('_', '-') if module != 'pytrec_eval' else 'pytrec-eval-terrier')}")
        except Exception:  # noqa: BLE001 - not installed
            versions.append(f"{module} -")
    return (f"{cpu}, {os.cpu_count()} cores, {memory} GiB; Python {platform.python_version()}; "
            f"{', '.join(versions)}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def ratio(results: dict, a: tuple[str, str], b: tuple[str, str] | list[tuple[str, str]]) -> float | None:
    """Median of ``a`` over the median of ``b`` (or over the sum of several)."""
    bs = b if isinstance(b, list) else [b]
    if a not in results or any(x not in results for x in bs) or any("error" in results[x] for x in [a, *bs]):
        return None
    return results[a]["median"] / sum(results[x]["median"] for x in bs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes only (< 2 minutes)")
    parser.add_argument("--doors", action="store_true", help="only the doors (every way in) at size c, or c_quick")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=HERE / "results", help="folder of the markdown report")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return

    quick, doors_only, began = args.quick, args.doors, time.perf_counter()
    b, c = ("b_quick", "c_quick") if quick else ("b", "c")
    mode = ("quick" if quick else "full") + (" doors" if doors_only else "")
    results: dict[tuple[str, str], dict] = {}
    print(f"evalbridge benchmark ({mode}): {machine()}", flush=True)
    # Build the inputs once, outside any timing.
    for size in ((c,) if doors_only else ("a", b, c) + (() if quick else ("d",))):
        build = f"run.files({size!r}); run.door_inputs({size!r})" if size == c else \
            f"run.dicts({size!r}); run.files({size!r})"
        subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r}); import run; {build}"],
                       check=True)
    if doors_only:
        measure(results, plan(quick, doors_only=True), passes=1 if quick else 2)
        finish(results, door_goals(results, c), mode, time.perf_counter() - began, args.out)
        return

    numba_warm = str(CACHE / "numba")  # kept between runs: ranx's kernels compile once
    startup("ranx", 1, {"NUMBA_CACHE_DIR": numba_warm})  # fills the warm cache
    # Fresh processes, interleaved (one of each in turn) so that a busy moment hits every contender.
    for _ in range(5 if quick else 10):
        for name in ("python", "evalbridge", "pytrec_eval", "ir_measures", "naive"):
            merge(results, ("startup a", name), startup(name, 1))
    results[("startup a", "ranx (warm numba cache)")] = startup("ranx", 1 if quick else 3,
                                                                {"NUMBA_CACHE_DIR": numba_warm})
    for (group, label), got in results.items():
        print(f"  {group} / {label}: {fmt(got['median'])}", flush=True)
    if not quick:
        cold = {"NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="numba_cold_")}
        results[("startup a", "ranx (cold numba cache)")] = startup("ranx", 1, cold)
        print(f"  startup a / ranx cold: {fmt(results[('startup a', 'ranx (cold numba cache)')]['median'])}")

    env_warm = {"NUMBA_CACHE_DIR": numba_warm}
    os.environ.update(env_warm)
    measure(results, plan(quick), passes=1 if quick else 2)

    goals = [
        ("1. fresh process, 100 x 10 dicts: evalbridge / pytrec_eval", 2.0,
         ratio(results, ("startup a", "evalbridge"), ("startup a", "pytrec_eval"))),
        (f"2. TREC files {c}: evalbridge / (ir-measures reader + pytrec_eval)", 0.3,
         ratio(results, (f"files {c}", "evalbridge"), (f"files {c}", "irm_files"))),
        (f"2. TREC files {c}: evalbridge / floor (pyarrow read + one vectorised pass)", 1.2,
         ratio(results, (f"files {c}", "evalbridge"), (f"files {c}", "floor"))),
        (f"3. dicts {'d' if not quick else b}: evalbridge / pytrec_eval", 1.0,
         ratio(results, (f"dicts {'d' if not quick else b}", "evalbridge"),
               (f"dicts {'d' if not quick else b}", "pytrec_eval"))),
        (f"4. dicts {b}: 20 metrics / 1 metric", 2.0,
         ratio(results, (f"metrics {b}", "20 metrics"), (f"metrics {b}", "1 metric"))),
        (f"6. cross-check {'a' if quick else b}: crosscheck / sum of the three backends", 1.2,
         ratio(results, (f"cross-check {'a' if quick else b}", "crosscheck"),
               [(f"cross-check {'a' if quick else b}", x) for x in ("eb_ranx", "eb_ir_measures", "eb_pytrec_eval")])),
    ]
    size = "d" if not quick else b
    eb, pt = results.get((f"dicts {size}", "evalbridge"), {}), results.get((f"dicts {size}", "pytrec_eval"), {})
    if eb.get("peak_growth") and pt.get("peak_growth"):
        goals.append((f"5. dicts {size}: peak RSS growth evalbridge / pytrec_eval", 1.0,
                      eb["peak_growth"] / pt["peak_growth"]))
    finish(results, goals + door_goals(results, c), mode, time.perf_counter() - began, args.out)


def measure(results: dict, steps: list[tuple[str, str, dict]], *, passes: int) -> None:
    """Run every step in its own worker, group by group, and print each group's medians."""
    groups: dict[str, list[tuple[str, dict]]] = {}
    for group, label, spec in steps:
        groups.setdefault(group, []).append((label, spec))
    for group, members in groups.items():
        # Each group ``passes`` times, forward then backward, so that slow moments of a shared
        # machine do not all fall on one contender; the runs of every pass are pooled. The doors twice
        # as many times, with half the calls in each worker: the same number of calls, from twice as
        # many processes (one process can run 10-15% slower than another of the same code, and with two
        # processes a door's median was one slow process's).
        rounds = 1 if group.startswith("cross-check") else 2 * passes if group.startswith("doors") else passes
        for n in range(rounds):
            for label, spec in (members if n % 2 == 0 else members[::-1]):
                merge(results, (group, label), spawn(spec))
        for label, _ in members:
            got = results[(group, label)]
            print(f"  {group} / {label}: " + (got["error"] if "error" in got else
                                              f"{fmt(got['median'])}, CPU {fmt(statistics.median(got['cpu']))} "
                                              f"(peak +{got['peak_growth'] / 2 ** 20:.0f} MiB)" if got.get("cpu") else
                                              f"{fmt(got['median'])} (peak +{got['peak_growth'] / 2 ** 20:.0f} MiB)"),
                  f"[load {os.getloadavg()[0]:.1f}]", flush=True)


def door_goals(results: dict, size: str) -> list[tuple[str, float, float | None]]:
    """Goal 7: every door within 1.3 x ``evaluate(paths)`` (time) and 1.5 x (peak memory); ``evaluate(paths)``
    within 1.2 x the floor; the RAG log within 1.5 x parsing it with ``json`` alone."""
    group = f"doors {size}"
    paths = (group, "evaluate(paths)")
    goals: list[tuple[str, float, float | None]] = [
        (f"7. doors {size}: evaluate(paths) / floor", 1.2, ratio(results, paths, (group, "floor")))]
    goals += [(f"7. doors {size}: {door} / evaluate(paths)", 1.3, ratio(results, (group, door), paths))
              for door in HELD]
    goals.append((f"7. doors {size}: RAG JSONL log / json.loads per line", 1.5,
                  ratio(results, (group, "RAG JSONL log, read_pair + evaluate"),
                        (group, "json.loads per line (parsing alone)"))))
    base = results.get(paths, {}).get("peak_growth")
    for door in (*HELD, "RAG JSONL log, read_pair + evaluate"):
        got = results.get((group, door), {}).get("peak_growth")
        goals.append((f"7. doors {size}: peak RSS growth {door} / evaluate(paths)", 1.5,
                      got / base if got and base else None))
    return goals


def finish(results: dict, goals: list, mode: str, wall: float, out: Path) -> None:
    """Print the report and write it to ``out/<mode>-<date>.md``."""
    report = render(results, goals, mode, wall)
    print(report)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{mode.replace(' ', '-')}-{time.strftime('%Y-%m-%d')}.md"
    path.write_text(report)
    print(f"written to {path}")


def render(results: dict, goals: list, mode: str, wall: float) -> str:
    lines = [f"# evalbridge benchmark ({mode}, {time.strftime('%Y-%m-%d %H:%M')})", "",
             f"Machine: {machine()}.", "",
             "Five metrics (nDCG@10, AP, R@100, RR@10, P@10) unless said otherwise. Sizes (queries x docs): "
             + ", ".join(f"{k} = {q:,} x {d:,}" for k, (q, d) in SIZES.items()) + ".", "",
             "## Goals (ratios of medians measured in this run)", "", "| goal | target | measured | met |",
             "|---|---|---|---|"]
    for name, target, value in goals:
        measured = "n/a" if value is None else f"{value:.2f}"
        met = "n/a" if value is None else ("yes" if value <= target else "**no**")
        lines.append(f"| {name} | <= {target} | {measured} | {met} |")
    lines += ["", "## Medians", "", "| group | contender | median | CPU median | first call | runs | peak RSS growth |",
              "|---|---|---|---|---|---|---|"]
    for (group, label), got in results.items():
        if "error" in got:
            lines.append(f"| {group} | {label} | error: {got['error']} | | | | |")
            continue
        cpu = fmt(statistics.median(got["cpu"])) if got.get("cpu") else ""
        lines.append(f"| {group} | {label} | {fmt(got['median'])} | {cpu} | {fmt(got['first'])} | {len(got['times'])} "
                     f"| {got['peak_growth'] / 2 ** 20:.0f} MiB |")
    lines += ["", "Startup rows are the wall time of a fresh `python -c` that imports the library and evaluates "
              "size a (the data are read from JSON in every variant). Other rows run in a fresh worker after the "
              "input is built and the libraries imported; `first call` is the warm-up call where there is one. "
              "`files` rows start from TREC files in the page cache; `floor` is pyarrow reading both files, the "
              "run's doc ids looked up in the qrels' and one vectorised pass. The cross-check rows use "
              "evalbridge's backends (`eb_*` = `evaluate(backend=...)`). `doors` rows evaluate the same data from "
              "every way in: TREC files, the objects `read_qrels` / `read_run` return, pandas and Arrow tables (built "
              "before the clock), the command line (`evalbridge eval`, `evalbridge run` with a config, in the worker's "
              "process, reports written to files), a RAG JSON Lines log (`contexts` with scores, `ground_truth` "
              "grades), and the parsing of that log alone. Fresh-process rows are interleaved (one run of "
              "each in turn); in full mode every other group runs twice, forward then backward, and the runs are "
              "pooled, so that the busy moments of a shared machine do not all fall on one contender.", "",
              "`CPU median` is the process's CPU time per call (every thread: Arrow's reader threads and "
              "evalbridge's hashing thread count), steadier than the wall time when other tenants load the "
              "machine.", "",
              f"Total wall time: {wall:.0f} s; load average at the end "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
