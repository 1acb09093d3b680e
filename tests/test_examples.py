"""examples/ holds small public data, unchanged: every file is listed in examples/README.md with its size
and md5, and equals the copy kept beside the checkout (../shared) when that folder is there."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
#: a file of examples/ -> where the same bytes live in ../shared
SHARED_COPIES = {"trec-dl-2019-passage": "data/real/trec-dl-2019-passage", "trec_eval": "conformance/trec_eval"}
ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| (?P<bytes>\d+) \| (?P<md5>`[0-9a-f]{32}`|-) \|", re.M)


def _listed() -> dict[str, tuple[int, str]]:
    text = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    return {m["file"]: (int(m["bytes"]), m["md5"].strip("`")) for m in ROW.finditer(text)}


def test_every_example_file_is_listed_with_its_size_and_md5() -> None:
    """The README's table lists exactly the data files of examples/, each with its size and md5."""
    files = {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*") if p.is_file() and p.name != "README.md"}
    listed = _listed()
    assert set(listed) == files
    for name, (size, md5) in listed.items():
        data = (EXAMPLES / name).read_bytes()
        assert len(data) == size, name
        assert md5 == "-" or hashlib.md5(data).hexdigest() == md5, name  # noqa: S324 - a checksum, not security


def test_examples_stay_small() -> None:
    """The examples are the small data the notebooks and configs need (the large data stays outside)."""
    assert sum(p.stat().st_size for p in EXAMPLES.rglob("*") if p.is_file()) < 1_200_000


@pytest.mark.parametrize("name", sorted(_listed()))
def test_example_equals_the_shared_copy(name: str, shared: Path) -> None:
    """Each example is byte-identical to the copy in ../shared it was taken from."""
    folder, file = name.split("/", 1)
    assert (EXAMPLES / name).read_bytes() == (shared / SHARED_COPIES[folder] / file).read_bytes()
