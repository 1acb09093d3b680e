"""``import evalbridge`` and a small ``evaluate`` stay light: no heavy library is imported on that path."""

from __future__ import annotations

import json
import subprocess
import sys

#: Libraries that must not be imported to evaluate a RAG-sized input from dicts.
HEAVY = ("pandas", "numpy", "pyarrow", "ranx", "numba", "ir_measures", "pytrec_eval", "scipy", "matplotlib", "mlflow",
         "yaml", "tabulate", "ir_datasets")

SCRIPT = """
import json, sys
import evalbridge
after_import = sorted(m for m in {heavy!r} if m in sys.modules)
qrels = {{f"q{{i}}": {{f"d{{j}}": j % 3 for j in range(0, 10, 2)}} for i in range(100)}}
run = {{f"q{{i}}": {{f"d{{j}}": 1.0 / (j + 1) for j in range(10)}} for i in range(100)}}
results = evalbridge.evaluate(qrels, run, ["nDCG@10", "AP", "R@100", "RR@10", "P@10"])
print(json.dumps({{"after_import": after_import,
                  "after_evaluate": sorted(m for m in {heavy!r} if m in sys.modules),
                  "backend": results.provenance.backend, "means": results.means}}))
"""


def run_fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter and return the JSON it prints."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_evaluate_small_dicts_imports_no_heavy_library() -> None:
    """A fresh `import evalbridge; evalbridge.evaluate(100 x 10 dicts, 5 metrics)` imports none of
    pandas, numpy, pyarrow, ranx, numba, ir_measures, pytrec_eval, scipy, matplotlib, yaml, tabulate."""
    report = run_fresh(SCRIPT.format(heavy=HEAVY))
    assert report["after_import"] == []
    assert report["after_evaluate"] == []
    assert report["backend"] == "reference"
    assert set(report["means"]) == {"nDCG@10", "AP", "R@100", "RR@10", "P@10"}


def test_the_probe_sees_heavy_imports() -> None:
    """The check can fail: asking for the per-query DataFrame does import pandas (and numpy)."""
    code = SCRIPT.format(heavy=HEAVY).replace("print(json.dumps(", "results.per_query\nprint(json.dumps(")
    report = run_fresh(code)
    assert {"pandas", "numpy"} <= set(report["after_evaluate"])


IMPORT_EVERY_MODULE = """
import importlib, pkgutil, evalbridge
names = sorted(m.name for m in pkgutil.walk_packages(evalbridge.__path__, "evalbridge."))
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def test_every_module_imports_with_warnings_as_errors(tmp_path) -> None:
    """`python -W error` imports every module of the package: no SyntaxWarning (an invalid escape such as '\\d' in
    a string), no DeprecationWarning at import. Compiled afresh (an empty bytecode cache), so a warning the
    compiler gives once is given again."""
    import os

    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path)}
    done = subprocess.run([sys.executable, "-W", "error", "-c", IMPORT_EVERY_MODULE], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) > 100  # every module was imported, not only the package root
