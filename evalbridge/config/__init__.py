"""Config-driven evaluations: a YAML file -> validated, frozen settings (:mod:`.schema`) -> one run
(:func:`evalbridge.config.pipeline.run_config`) with reports. Inputs are read through :mod:`.sources`.

A config file holds one evaluation, or several as YAML documents separated by ``---``.
Everything is checked when the file is loaded, before any computing: unknown keys (with
the closest valid key), metric strings, backends, choices, numbers, the baseline, the
gates, and that every input file exists. Errors name the config file and line, the key
path (``runs.bm25.path``), the bad value and a fix. Only ``yaml.safe_load`` semantics
are used (no Python objects). Paths in a config are relative to the config file.

Every key is described in ``docs/config.md``. The smallest config::

    qrels: qrels.txt
    runs: {bm25: bm25.run}
    metrics: [nDCG@10, P@5]

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "eval.yaml").write_text(
    ...     "runs:\\n  rag: {format: labels, data: {q1: [1, 0, 1], q2: [0, 1, 0]}}\\nmetrics: [P@3, mrr]\\n")
    >>> config = load_config(folder / "eval.yaml")
    >>> [str(m.metric) for m in config.metrics], list(config.runs)
    (['P@3', 'RR'], ['rag'])
    >>> from evalbridge.config.pipeline import run_config
    >>> outcome = run_config(config)
    >>> round(outcome.report.results["rag"]["P@3"], 4), outcome.exit_code
    (0.5, 0)
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from .checking import YamlLocator
from .analyses import TOP_KEYS
from .layout import (AgreementSettings, ComparisonSettings, Config, CrossCheckSettings, OutputSettings,
                     PlotSettings)
from .schema import validate
from .sources import Source, load_qrels, load_run

__all__ = ["Config", "Source", "CrossCheckSettings", "ComparisonSettings", "AgreementSettings", "PlotSettings",
           "OutputSettings", "load_config", "load_configs", "load_qrels", "load_run", "TOP_KEYS"]

def load_configs(path: str | os.PathLike[str]) -> list[Config]:
    """Load and validate every evaluation (YAML document) in a config file (see :func:`_load`); its messages
    speak a config's words (:mod:`evalbridge.common.wording`)."""
    from ..common.wording import door

    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"a config is read from a file path; got {type(path).__name__} {path!r:.60}.",
                         fix="pass e.g. 'configs/eval.yaml'.")
    with door("config"):
        return _load(path)


def _load(path: str | os.PathLike[str]) -> list[Config]:
    """Load and validate every evaluation (YAML document) in a config file.

    Raises:
        InputError: the file is missing or not YAML (duplicate keys, alias bombs and recursive aliases
            are refused), or any setting is invalid (the message names file:line, the key path, the
            value and a fix).
    """
    from ..io.yamldata import load_yaml_documents

    from ..io.text import NOT_A_FILE, NOT_A_FILE_FIX, not_a_file

    path = Path(path).resolve() if Path(path).exists() else Path(path)
    fault = not_a_file(path)
    if fault is not None:
        raise InputError(f"{NOT_A_FILE[fault].replace('the file', 'the config file')}.", source=str(path),
                         fix=f"{NOT_A_FILE_FIX[fault]}; configs live in configs/*.yaml.")
    from ..reports.writing import note_read

    note_read(path)  # no output of the command may replace it
    documents = load_yaml_documents(path.read_bytes(), str(path))
    kept = [(i, data, lines) for i, (data, lines) in enumerate(documents) if data is not None]
    if not kept:
        raise InputError("the config file is empty.", source=str(path), fix="see configs/*.yaml for examples.")
    configs = [validate(data, locator=YamlLocator(str(path), lines, i), folder=path.parent, path=path, document=i,
                        count=len(kept), default_dir="reports/{stem}") for i, data, lines in kept]
    dirs = [c.output.dir for c in configs]
    if len(set(dirs)) != len(dirs):
        raise InputError("two evaluations in the file write to the same output.dir.", source=str(path),
                         fix="give each document its own output: {dir: ...}.")
    return configs


def load_config(path: str | os.PathLike[str]) -> Config:
    """Load and validate a config file that holds one evaluation (see :func:`load_configs`)."""
    configs = load_configs(path)
    if len(configs) != 1:
        raise InputError(f"the file holds {len(configs)} evaluations.", source=str(path),
                         fix="use load_configs() to get them all.")
    return configs[0]


