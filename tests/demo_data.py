"""The data of `make run`: TREC Robust04 qrels and a BM25+RM3 run, read out of the capreolus 0.2.6 wheel on
PyPI into .cache/robust04/ exactly as the Makefile's `demo-data` target does (pip download + zipfile).

`make test` runs the suite on several workers: the first to need the files fetches them under a lock, the others
wait for it and read whole files."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROBUST = REPO / ".cache" / "robust04"
ROBUST_FILES = ("qrels.robust2004.txt", "rob04_yang19_rm3.run")


def fetch_robust04() -> Path:
    """.cache/robust04/ with the two files (downloaded once); the calling test is skipped if PyPI is unreachable."""
    if all((ROBUST / name).is_file() for name in ROBUST_FILES):
        return ROBUST
    cache = REPO / ".cache"
    cache.mkdir(exist_ok=True)
    with open(cache / "robust04.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all((ROBUST / name).is_file() for name in ROBUST_FILES):
            return ROBUST
        return _fetch(cache)


def _fetch(cache: Path) -> Path:
    wheel = cache / "capreolus-0.2.6-py3-none-any.whl"
    if not wheel.is_file():
        done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                               "--dest", str(cache), "capreolus==0.2.6"], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0 or not wheel.is_file():
            pytest.skip(f"the demo needs the Robust04 files and `pip download capreolus==0.2.6` failed: "
                        f"{(done.stderr or done.stdout).strip()[-300:]}")
    ROBUST.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for name in ROBUST_FILES:
            part = ROBUST / f".{name}.part"
            part.write_bytes(archive.read(f"capreolus/data/{name}"))
            os.replace(part, ROBUST / name)
    return ROBUST
