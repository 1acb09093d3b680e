"""Outputs that never destroy data (evalbridge.reports.writing): guards, file names, atomic files and folders.

The overwrite cases write through the guard as a pipeline would (guard first, then write) and
check the input is byte-identical afterwards. The crash cases kill real processes with SIGKILL.
"""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalbridge.errors import InputError
from evalbridge.reports import report_folder
from evalbridge.reports.writing import atomic_file, write_file_atomic
from evalbridge.reports.report_folder import ReportFolder, check_report_folder
from evalbridge.reports.writing import MARKER, guard_outputs, resolve_output_dir, slug, unique_file_names, write_file_atomic

POSIX_ONLY = pytest.mark.skipif(os.name != "posix", reason="SIGKILL, umask and symlinks as on POSIX")


@pytest.fixture(params=["exchange", "rename"])
def swap(request, monkeypatch) -> str:
    """Run a test with the atomic exchange (Linux) and with the portable two-rename swap."""
    if request.param == "rename":
        monkeypatch.setattr(report_folder, "_exchange", lambda a, b: False)
    elif report_folder._renameat2() is None:
        pytest.skip("no renameat2 on this system: the two-rename swap is the one in use")
    return request.param


def _inputs(folder: Path) -> dict[Path, bytes]:
    """Two input files with distinct bytes, as a config would point to."""
    data = {folder / "qrels.txt": b"q1 0 d1 1\nq1 0 d2 0\n", folder / "run.txt": b"q1 Q0 d1 1 0.9 bm25\n"}
    for path, content in data.items():
        path.write_bytes(content)
    return data


def _write_guarded(inputs: list[Path], output: Path | str, text: str) -> None:
    """What a pipeline does for `-o OUTPUT`: the guard, then the atomic write."""
    guard_outputs(inputs, [output])
    write_file_atomic(output, text)


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative posix path -> bytes)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- guard_outputs

def test_an_output_that_is_an_input_is_refused_and_the_input_stays_byte_identical(tmp_path, monkeypatch):
    """`eval qrels.txt run.txt -o run.txt`: refused, naming both; the run is untouched."""
    monkeypatch.chdir(tmp_path)
    data = _inputs(tmp_path)
    with pytest.raises(InputError, match=r"the output 'run.txt'.* is the input '.*run.txt'.*Fix: write the output"):
        _write_guarded(list(data), "run.txt", "# report\n")
    assert {p: p.read_bytes() for p in data} == data


@POSIX_ONLY
@pytest.mark.parametrize("spelling", ["dotdot", "absolute", "symlink", "hardlink", "symlinked_folder"])
def test_an_output_that_resolves_to_an_input_is_refused(tmp_path, spelling):
    """Through `..`, an absolute path, a symlink, a hard link, or a symlinked folder: still the input."""
    data = _inputs(tmp_path)
    run = tmp_path / "run.txt"
    (tmp_path / "sub").mkdir()
    outputs = {
        "dotdot": lambda: tmp_path / "sub" / ".." / "run.txt",
        "absolute": lambda: run.resolve(),
        "symlink": lambda: (tmp_path / "link.txt").symlink_to(run) or tmp_path / "link.txt",
        "hardlink": lambda: os.link(run, tmp_path / "hard.txt") or tmp_path / "hard.txt",
        "symlinked_folder": lambda: (tmp_path / "alias").symlink_to(tmp_path) or tmp_path / "alias" / "run.txt",
    }
    output = outputs[spelling]()
    with pytest.raises(InputError, match="is the input") as error:
        _write_guarded(list(data), output, "# report\n")
    assert str(output) in str(error.value) and "run.txt" in str(error.value)
    assert {p: p.read_bytes() for p in data} == data


def test_a_per_query_output_onto_the_qrels_is_refused(tmp_path):
    """`--per-query qrels.txt`: the second output of a command is guarded like the first."""
    data = _inputs(tmp_path)
    with pytest.raises(InputError, match="qrels.txt"):
        guard_outputs(list(data), [tmp_path / "report.md", tmp_path / "qrels.txt"])
    assert {p: p.read_bytes() for p in data} == data


@pytest.mark.parametrize("inputs_under", [".", "a", "a/b"])
def test_a_report_folder_that_contains_an_input_is_refused(tmp_path, inputs_under):
    """`output.dir` holding an input (directly or deeper): refused before the folder is replaced."""
    (tmp_path / inputs_under).mkdir(parents=True, exist_ok=True)
    data = _inputs(tmp_path / inputs_under)
    before = _tree(tmp_path)
    with pytest.raises(InputError, match=r"the output folder .* contains the input .* Fix: write the reports to a "
                                         r"folder of their own"):
        guard_outputs(list(data), [tmp_path])
        with ReportFolder(tmp_path) as folder:
            folder.write_text("report.md", "# report\n")
    assert _tree(tmp_path) == before


def test_two_outputs_that_are_one_file_are_refused(tmp_path):
    with pytest.raises(InputError, match=r"two outputs are the same file: '.*out/report.md' and "
                                         r"'.*out/x/../report.md' \(that is '.*out/report.md'\)"):
        guard_outputs([], [tmp_path / "out" / "report.md", tmp_path / "out" / "x" / ".." / "report.md"])


def test_an_output_inside_the_report_folder_is_refused(tmp_path):
    """`-o reports/demo/summary.md` beside `output.dir: reports/demo`: the folder swap would erase it."""
    with pytest.raises(InputError, match=r"'.*summary.md'.* lies inside the output folder '.*demo'"):
        guard_outputs([], [tmp_path / "reports" / "demo", tmp_path / "reports" / "demo" / "summary.md"])


def test_outputs_beside_the_inputs_are_accepted(tmp_path):
    data = _inputs(tmp_path)
    guard_outputs(list(data), [tmp_path / "report.md", tmp_path / "reports" / "demo", tmp_path / "run.txt.md"])


PARTS = st.lists(st.sampled_from("ab"), min_size=1, max_size=3).map(tuple)


@given(inputs=st.lists(PARTS, max_size=3), outputs=st.lists(PARTS, max_size=3))
def test_the_guard_refuses_exactly_the_layouts_where_an_output_covers_an_input_or_another_output(inputs, outputs):
    """Oracle on path tuples: refused iff an output equals or encloses an input, or two outputs overlap."""
    def covers(outer: tuple, inner: tuple) -> bool:
        return inner[:len(outer)] == outer

    # input files that can exist together: none is a folder holding another
    inputs = [p for p in dict.fromkeys(inputs) if not any(q != p and (covers(p, q) or covers(q, p)) for q in inputs)]

    expected = any(covers(o, i) for o in outputs for i in inputs) or any(
        covers(a, b) or covers(b, a) for n, a in enumerate(outputs) for b in outputs[:n])
    with tempfile.TemporaryDirectory() as root:
        for parts in inputs:
            path = Path(root, *parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("input")
        try:
            guard_outputs([Path(root, *p) for p in inputs], [Path(root, *p) for p in outputs])
            refused = False
        except InputError:
            refused = True
    assert refused == expected


# ---------------------------------------------------------------- unique_file_names

def test_runs_whose_names_share_a_file_are_refused_naming_both():
    """`bm25_rm3` and `bm25-rm3` both slug to `bm25-rm3.json`: one would be lost."""
    with pytest.raises(InputError, match=r"the systems 'bm25_rm3' and 'bm25-rm3' would both be written to "
                                         r"'bm25-rm3.json'\. Fix: rename one of them"):
        unique_file_names(["bm25_rm3", "bm25-rm3"], suffix=".json")


def test_names_that_differ_only_in_case_are_refused_for_case_insensitive_file_systems():
    with pytest.raises(InputError, match=r"'BM25' and 'bm25' would both be written to 'BM25.json' and 'bm25.json', "
                                         r"one file on case-insensitive file systems"):
        unique_file_names({"BM25": "run1.txt", "bm25": "run2.txt"}, suffix=".json")


@pytest.mark.parametrize(("name", "said"), [("()", "gives no usable file name"), ("..", "holds a leading dot"),
                                             ("-", "gives no usable file name"), ("_._", "gives no usable file name")])
def test_a_name_that_gives_no_usable_file_name_is_refused(name, said):
    with pytest.raises(InputError, match=said):
        unique_file_names([name], suffix=".json")


def test_a_name_too_long_for_a_file_name_is_refused():
    with pytest.raises(InputError, match="too long for a file name"):
        unique_file_names(["x" * 300], suffix=".json")


def test_a_name_given_twice_is_refused():
    with pytest.raises(InputError, match="'bm25' is given twice"):
        unique_file_names(["bm25", "bm25"])


@given(st.lists(st.text(alphabet="aAbB_-@. 1", min_size=1, max_size=4), max_size=6))
def test_file_names_are_the_slugs_and_never_shared_even_ignoring_case(names):
    """Either every name gets slug + suffix and no two files coincide case-insensitively, or the
    error is real: a name repeats, starts with a dot, gives no usable name, or two names share a file."""
    files = [slug(n) + ".json" for n in names]
    clash = (len(set(names)) != len(names) or any(not slug(n).strip(".") or n.startswith(".") for n in names)
             or len({f.casefold() for f in files}) != len(files))
    try:
        result = unique_file_names(names, suffix=".json")
    except InputError:
        assert clash
    else:
        assert not clash
        assert result == dict(zip(names, files))


def test_a_custom_slug_is_used():
    assert unique_file_names(["a b"], slug=lambda n: n.replace(" ", "_")) == {"a b": "a_b"}


# ---------------------------------------------------------------- resolve_output_dir

def test_a_relative_output_dir_is_inside_the_config_folder(tmp_path):
    assert resolve_output_dir(tmp_path, "reports/demo") == tmp_path / "reports" / "demo"
    assert resolve_output_dir(tmp_path, "a/../reports") == tmp_path / "reports"


def test_an_output_dir_escaping_the_config_folder_is_refused_with_the_fix(tmp_path):
    with pytest.raises(InputError, match=r"output.dir '../reports/demo' leaves the config's folder .* Fix: write a "
                                         r"path inside that folder .* or an absolute path"):
        resolve_output_dir(tmp_path / "configs", "../reports/demo")


def test_an_absolute_output_dir_is_taken_as_it_is(tmp_path):
    assert resolve_output_dir(tmp_path / "configs", tmp_path / "elsewhere") == tmp_path / "elsewhere"


@pytest.mark.parametrize("written", [".", "reports/..", ""])
def test_the_config_folder_itself_or_nothing_is_refused(tmp_path, written):
    with pytest.raises(InputError, match="config's own folder|is empty"):
        resolve_output_dir(tmp_path, written)


def test_a_home_relative_output_dir_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_output_dir(tmp_path / "configs", "~/reports") == tmp_path / "home" / "reports"


@given(st.lists(st.sampled_from(["a", "b", "..", "."]), min_size=1, max_size=6))
def test_a_relative_output_dir_is_accepted_iff_it_stays_strictly_inside(parts):
    """Oracle: walk the parts with a stack; refused iff a `..` pops past the folder, or nothing is left."""
    stack: list[str] = []
    escaped = False
    for part in parts:
        if part == "..":
            if not stack:
                escaped = True
                break
            stack.pop()
        elif part != ".":
            stack.append(part)
    folder = Path("/work/configs")
    try:
        result = resolve_output_dir(folder, "/".join(parts))
    except InputError:
        assert escaped or not stack
    else:
        assert not escaped and result == folder.joinpath(*stack)


# ---------------------------------------------------------------- single files

def test_write_file_atomic_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out" / "report.md"
    write_file_atomic(target, "old")
    assert write_file_atomic(target, b"new \xe2\x9c\x93") == target
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert os.listdir(tmp_path / "out") == ["report.md"]


def test_a_failed_single_file_write_names_the_users_path_and_keeps_the_old_file(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    with pytest.raises(OSError) as error:
        with atomic_file(target) as temporary:
            raise OSError(28, "No space left on device", str(temporary))
    assert error.value.errno == 28 and error.value.filename == str(target)
    assert ".tmp-" not in str(error.value)
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["report.md"]


def test_writing_onto_a_folder_is_refused_naming_the_users_path(tmp_path):
    (tmp_path / "report.md").mkdir()
    with pytest.raises(InputError, match="is a folder; evalbridge writes only regular files") as error:
        write_file_atomic(tmp_path / "report.md", "x")
    assert str(tmp_path / "report.md") in str(error.value) and ".tmp-" not in str(error.value)


def test_writing_under_a_file_names_the_users_path(tmp_path):
    (tmp_path / "file").write_text("input")
    with pytest.raises(InputError, match="is a file, not a folder") as error:
        write_file_atomic(tmp_path / "file" / "report.md", "x")
    assert str(tmp_path / "file") in str(error.value) and ".tmp-" not in str(error.value)
    assert (tmp_path / "file").read_text() == "input"


# ---------------------------------------------------------------- ReportFolder

def _write_run(target: Path, files: dict[str, str], **options) -> ReportFolder:
    with ReportFolder(target, **options) as folder:
        for name, text in files.items():
            folder.write_text(name, text)
    return folder


def test_a_second_run_leaves_nothing_of_the_first(tmp_path, swap):
    """`report.csv` with nDCG@10 never sits beside a `per_query.csv` of another run."""
    target = tmp_path / "reports" / "demo"
    _write_run(target, {"report.csv": "nDCG@10", "per_query.csv": "nDCG@10", "plots/a.png": "png"})
    folder = _write_run(target, {"report.csv": "P@10"})
    assert set(_tree(target)) == {"report.csv", MARKER}
    assert folder.files == (target / "report.csv",)
    assert sorted(os.listdir(target.parent)) == [".demo.lock", "demo"]


def test_the_marker_lists_every_file_written_including_those_written_by_path(tmp_path):
    target = tmp_path / "demo"
    with ReportFolder(target) as folder:
        folder.write_bytes("per_query.parquet", b"PAR1")
        folder.path_for("plots/ndcg.png").write_bytes(b"\x89PNG")
        (folder.dir_for("plots/curves") / "ndcg.svg").write_text("<svg/>")
        assert folder.files == ()
    assert json.loads((target / MARKER).read_text())["files"] == ["per_query.parquet", "plots/curves/ndcg.svg",
                                                                  "plots/ndcg.png"]
    assert folder.files == (target / "per_query.parquet", target / "plots" / "curves" / "ndcg.svg",
                            target / "plots" / "ndcg.png")
    assert check_report_folder(target) == target


def test_an_exception_inside_leaves_the_old_folder_byte_identical(tmp_path, swap):
    target = tmp_path / "demo"
    _write_run(target, {"report.md": "# old\n", "systems/bm25.json": "{}"})
    before = _tree(target)
    with pytest.raises(ValueError, match="renderer failed"):
        with ReportFolder(target) as folder:
            folder.write_text("report.md", "# new, half done\n")
            raise ValueError("renderer failed")
    assert _tree(target) == before
    assert sorted(os.listdir(tmp_path)) == [".demo.lock", "demo"]
    _write_run(target, {"report.md": "# next\n"}, wait=0)  # the lock was released


def test_a_folder_of_other_files_is_never_replaced_and_nothing_is_left_beside_it(tmp_path):
    target = tmp_path / "thesis"
    target.mkdir()
    (target / "chapter1.tex").write_text("precious")
    with pytest.raises(InputError, match=r"'.*thesis' holds files that evalbridge did not write \(chapter1.tex\); "
                                         r"a report folder is replaced whole"):
        _write_run(target, {"report.md": "# report\n"})
    assert _tree(target) == {"chapter1.tex": b"precious"}
    assert os.listdir(tmp_path) == ["thesis"]


def test_a_file_added_to_a_report_folder_by_hand_is_never_deleted(tmp_path):
    """`notes.md` put into reports/demo after a run is not in the marker: the next run refuses."""
    target = tmp_path / "demo"
    _write_run(target, {"report.md": "x", "plots/a.png": "png"})
    (target / "plots" / "notes.md").write_text("my notes")
    before = _tree(target)
    with pytest.raises(InputError, match=r"holds files that evalbridge did not write \(plots/notes.md\)"):
        _write_run(target, {"report.md": "y"})
    assert _tree(target) == before


def test_an_empty_folder_and_a_report_of_an_earlier_version_are_replaced(tmp_path):
    (tmp_path / "empty").mkdir()
    _write_run(tmp_path / "empty", {"report.md": "x"})
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "provenance.json").write_text(json.dumps({"evalbridge_version": "0.1.0"}))
    (legacy / "report.md").write_text("old")
    _write_run(legacy, {"report.md": "new"})
    assert _tree(legacy) == {"report.md": b"new", MARKER: (legacy / MARKER).read_bytes()}


def test_a_file_where_the_folder_should_be_is_refused(tmp_path):
    (tmp_path / "demo").write_text("input")
    with pytest.raises(InputError, match="is a file"):
        _write_run(tmp_path / "demo", {"report.md": "x"})
    assert (tmp_path / "demo").read_text() == "input"


def test_a_second_run_into_a_held_folder_fails_at_once_with_the_reason(tmp_path):
    target = tmp_path / "demo"
    with ReportFolder(target):
        with pytest.raises(InputError, match=rf"another evalbridge run \(process {os.getpid()}\) is writing the "
                                             r"report folder '.*demo'\. Fix: wait for it"):
            _write_run(target, {"report.md": "x"}, wait=0)


def test_a_second_run_waits_for_the_first_and_then_writes(tmp_path):
    target = tmp_path / "demo"
    entered, order = threading.Event(), []

    def first() -> None:
        with ReportFolder(target) as folder:
            entered.set()
            time.sleep(0.3)
            folder.write_text("report.md", "first")
        order.append("first")

    thread = threading.Thread(target=first)
    thread.start()
    entered.wait()
    _write_run(target, {"report.md": "second"}, wait=30)
    order.append("second")
    thread.join()
    assert order == ["first", "second"] and (target / "report.md").read_text() == "second"


def test_a_run_that_waited_too_long_says_how_long(tmp_path):
    target = tmp_path / "demo"
    with ReportFolder(target):
        with pytest.raises(InputError, match=r"is writing the report folder '.*demo'; waited 0.2 s"):
            _write_run(target, {"report.md": "x"}, wait=0.2)


def test_errors_inside_the_folder_name_the_users_path_never_the_temporary(tmp_path, swap):
    target = tmp_path / "demo"
    with pytest.raises(OSError) as error:
        with ReportFolder(target) as folder:
            raise OSError(28, "No space left on device", str(folder.path_for("plots/x.png")))
    assert error.value.filename == str(target / "plots" / "x.png") and ".tmp-" not in str(error.value)
    with pytest.raises(OSError) as error:
        with ReportFolder(target) as folder:
            folder.write_text("a", "file")
            folder.path_for("a/b.txt")  # 'a' is a file: no folder can be made under it
    assert str(target / "a") in str(error.value) and ".tmp-" not in str(error.value)
    assert not target.exists() and os.listdir(tmp_path) == [".demo.lock"]


def test_a_report_folder_under_a_file_names_the_users_path(tmp_path):
    (tmp_path / "file").write_text("input")
    with pytest.raises(InputError, match="is a file, not a folder") as error:
        _write_run(tmp_path / "file" / "demo", {"report.md": "x"})
    assert str(tmp_path / "file") in str(error.value)
    assert (tmp_path / "file").read_text() == "input"


@pytest.mark.parametrize("second", ["report.md", "REPORT.md", "./report.md"])
def test_one_file_written_twice_is_refused(tmp_path, second):
    with pytest.raises(InputError, match=r"two outputs would both be written to '.*report.md'"):
        with ReportFolder(tmp_path / "demo") as folder:
            folder.write_text("report.md", "a")
            folder.write_text(second, "b")
    assert not (tmp_path / "demo").exists()


@pytest.mark.parametrize("name", ["../escape.md", "/etc/passwd", "", ".", MARKER, "a/../../b"])
def test_a_name_outside_the_report_folder_is_refused(tmp_path, name):
    with pytest.raises(InputError, match="must be a relative path inside the report folder"):
        _write_run(tmp_path / "demo", {name: "x"})
    assert sorted(os.listdir(tmp_path)) == [".demo.lock"]


def test_leftovers_of_a_killed_run_are_recovered_by_the_next_run(tmp_path):
    """A kill between the two renames of the portable swap leaves only a backup: a reader is told
    where it is, and the next run restores it (then replaces it) and removes every leftover."""
    target = tmp_path / "demo"
    _write_run(target, {"report.md": "generation 1"})
    real = target.resolve()
    os.rename(real, report_folder._sibling(real, "old"))  # the first rename of the swap, then SIGKILL
    half = report_folder._sibling(real, "tmp")
    half.mkdir()
    (half / "report.md").write_text("generation 2, half writ")
    with pytest.raises(InputError, match=r"'.*demo' is missing: a run was interrupted while replacing it; the "
                                         r"previous reports are complete in '.*\.demo\.old-"):
        check_report_folder(target)
    with ReportFolder(target) as folder:
        assert (target / "report.md").read_text() == "generation 1"
        folder.write_text("report.md", "generation 2")
    assert folder.recovered == (f"restored {str(target)!r} from the backup an interrupted run left",
                                f"removed 1 temporary folder(s) that interrupted runs left beside {str(target)!r}")
    assert (target / "report.md").read_text() == "generation 2"
    assert sorted(os.listdir(tmp_path)) == [".demo.lock", "demo"]


def test_only_the_folders_own_leftovers_are_removed(tmp_path):
    """A sibling folder whose name merely starts like a leftover (`.demo.tmp-notes`) is not touched."""
    (tmp_path / ".demo.tmp-notes").mkdir()
    (tmp_path / ".demo.tmp-notes" / "keep.txt").write_text("mine")
    _write_run(tmp_path / "demo", {"report.md": "x"})
    assert (tmp_path / ".demo.tmp-notes" / "keep.txt").read_text() == "mine"


def test_a_reader_is_told_when_files_are_missing_or_nothing_was_written(tmp_path):
    with pytest.raises(InputError, match="there is no report folder"):
        check_report_folder(tmp_path / "demo")
    _write_run(tmp_path / "demo", {"report.md": "x", "report.csv": "y"})
    (tmp_path / "demo" / "report.csv").unlink()
    with pytest.raises(InputError, match=r"is incomplete: report.csv is missing"):
        check_report_folder(tmp_path / "demo")


@POSIX_ONLY
def test_a_symlinked_report_folder_is_replaced_where_it_points(tmp_path, swap):
    (tmp_path / "disk").mkdir()
    _write_run(tmp_path / "disk" / "demo", {"old.md": "x"})
    (tmp_path / "demo").symlink_to(tmp_path / "disk" / "demo")
    folder = _write_run(tmp_path / "demo", {"new.md": "y"})
    assert (tmp_path / "demo").is_symlink() and set(_tree(tmp_path / "demo")) == {"new.md", MARKER}
    assert folder.files == (tmp_path / "demo" / "new.md",)


@pytest.mark.skipif(report_folder._renameat2() is None, reason="no renameat2 here")
def test_the_exchange_swaps_two_folders_in_one_step(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "from_a").write_text("a")
    assert report_folder._exchange(tmp_path / "a", tmp_path / "b")
    assert os.listdir(tmp_path / "b") == ["from_a"] and os.listdir(tmp_path / "a") == []


# ---------------------------------------------------------------- umask

UMASK_SCRIPT = r"""
import json, os, stat, sys
os.umask(int(sys.argv[2], 8))
from evalbridge.reports.writing import atomic_file
from evalbridge.reports.report_folder import ReportFolder
from evalbridge.reports.writing import write_file_atomic
root = sys.argv[1]
with ReportFolder(os.path.join(root, "reports", "demo")) as folder:
    folder.write_text("report.md", "x")
    folder.write_bytes("systems/bm25.json", b"{}")
    with open(folder.path_for("plots/a.png"), "wb") as handle:
        handle.write(b"png")
write_file_atomic(os.path.join(root, "single", "report.md"), "x")
with atomic_file(os.path.join(root, "single", "per_query.parquet")) as tmp:
    tmp.write_bytes(b"PAR1")
modes = {}
for folder, dirs, files in os.walk(root):
    for name in dirs + files:
        path = os.path.join(folder, name)
        modes[os.path.relpath(path, root)] = [os.path.isdir(path), stat.S_IMODE(os.stat(path).st_mode)]
print(json.dumps(modes))
"""


@POSIX_ONLY
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_and_folders_get_their_permissions_from_the_umask(tmp_path, umask):
    """0o666 / 0o777 minus the umask for every file and folder written (tempfile's 0600 must not leak)."""
    done = subprocess.run([sys.executable, "-c", UMASK_SCRIPT, str(tmp_path), oct(umask)], capture_output=True,
                          text=True, check=True, timeout=60)
    modes = json.loads(done.stdout)
    assert {"reports/demo/report.md", "reports/demo/plots/a.png", "single/per_query.parquet",
            "reports/.demo.lock"} <= set(modes)
    for name, (is_dir, mode) in modes.items():
        assert mode == (0o777 if is_dir else 0o666) & ~umask, (name, oct(mode))


# ---------------------------------------------------------------- kills and concurrent runs

WRITER = r"""
import json, sys
from evalbridge.reports import report_folder
target, swap, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if swap == "rename":
    report_folder._exchange = lambda a, b: False
names = [f"file{i}.txt" for i in range(5)] + ["sub/a.txt", "sub/deeper/b.txt"]
print("ready", flush=True)
for _ in range(count):
    with report_folder.ReportFolder(target, wait=None) as folder:
        manifest = folder.path / "manifest.json"   # the current folder (restored if needed): stable under the lock
        generation = json.loads(manifest.read_text())["generation"] + 1 if manifest.exists() else 1
        for name in names:
            folder.write_text(name, f"{tag}:{generation}\n" * (50 + 10 * generation % 7))
        folder.write_text("manifest.json", json.dumps({"generation": generation, "tag": tag, "files": names}))
    print(generation, flush=True)
"""


def _consistent(folder: Path) -> tuple[int, str]:
    """(generation, tag) of a complete folder; fails unless every file is of that one generation."""
    manifest = json.loads((folder / "manifest.json").read_text())
    generation, tag = manifest["generation"], manifest["tag"]
    assert set(_tree(folder)) == {*manifest["files"], "manifest.json", MARKER}
    for name in manifest["files"]:
        assert (folder / name).read_text() == f"{tag}:{generation}\n" * (50 + 10 * generation % 7), name
    assert json.loads((folder / MARKER).read_text())["files"] == sorted([*manifest["files"], "manifest.json"])
    return generation, tag


def _writer(target: Path, swap: str, tag: str, count: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(target), swap, tag, str(count)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@POSIX_ONLY
@pytest.mark.slow
def test_a_run_killed_at_random_points_leaves_the_old_folder_or_the_new_one(tmp_path):
    """20 writers SIGKILLed at random moments (10 with the atomic exchange, 10 with the two-rename
    swap). After each kill the folder is complete and of the last committed generation or the
    next; when a kill struck between the two renames, a reader is told where the complete
    previous folder is, and the next writer restores it. No leftover survives a clean run."""
    target = tmp_path / "reports" / "demo"
    subprocess.run([sys.executable, "-c", WRITER, str(target), "exchange", "w", "1"], check=True,
                   capture_output=True, timeout=60)
    committed, rng = 1, random.Random(20240607)
    for kill in range(20):
        swap = "exchange" if kill < 10 or report_folder._renameat2() is None else "rename"
        writer = _writer(target, swap, "w", 10_000)
        assert writer.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.0, 0.25))
        writer.send_signal(signal.SIGKILL)
        out, _ = writer.communicate(timeout=30)
        printed = [int(line) for line in out.split()]
        committed = printed[-1] if printed else committed
        if target.exists():
            generation, _ = _consistent(target)
        else:
            assert swap == "rename"
            with pytest.raises(InputError, match="was interrupted while replacing it"):
                check_report_folder(target)
            backups = report_folder._siblings(target, "old")
            assert len(backups) == 1
            generation, _ = _consistent(backups[0])
        assert generation in (committed, committed + 1), (kill, swap, generation, committed)
        committed = generation
    with ReportFolder(target) as folder:
        pass
    assert sorted(os.listdir(target.parent)) == [".demo.lock", "demo"]


@POSIX_ONLY
@pytest.mark.parametrize("swap", ["exchange", "rename"])
def test_two_concurrent_runs_into_one_folder_leave_a_consistent_folder(tmp_path, swap):
    """Two processes write 8 generations each into one folder at the same time: the lock serialises
    them, both succeed, and the folder afterwards is one run's complete output, nothing left beside it."""
    target = tmp_path / "demo"
    writers = [_writer(target, swap, tag, 8) for tag in ("A", "B")]
    outputs = [w.communicate(timeout=120) for w in writers]
    assert [w.returncode for w in writers] == [0, 0], outputs
    generation, tag = _consistent(target)
    assert generation == 16 and tag in ("A", "B")
    assert sorted(int(g) for out, _ in outputs for g in out.split()[1:]) == list(range(1, 17))
    assert sorted(os.listdir(tmp_path)) == [".demo.lock", "demo"]


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.sampled_from(["write", "fail", "leftover", "other"]), min_size=1, max_size=8))
def test_an_output_holds_its_last_whole_write_and_the_next_write_sweeps_every_leftover(steps: list[str]) -> None:
    """Any sequence of writes of one output (``io.text.replacing``, the one atomic write): a whole one, one that
    fails half-way (a full disk), the leftover of a writer killed mid-write (a temporary file of the output that
    nobody holds), one of another output. The output always holds its last whole write, the failure names the
    output (never the temporary file), and after any write of it, whole or failed, none of its leftovers is left
    while the other output's stay (POSIX: swept by their locks)."""
    import secrets

    from evalbridge.io.text import replacing

    folder = Path(tempfile.mkdtemp())
    target, last, others = folder / "out.jsonl", None, set()
    for n, step in enumerate(steps):
        if step in ("leftover", "other"):
            name = f".tmp-{secrets.token_hex(4)}-{'out.jsonl' if step == 'leftover' else 'other.jsonl'}"
            (folder / name).write_text("half")
            others |= {name} if step == "other" else set()
            continue
        try:
            with replacing(target) as temporary:
                temporary.write_text(f"whole {n}\n")
                if step == "fail":
                    raise OSError(28, "No space left on device", str(temporary))
            last = f"whole {n}\n"
        except OSError as error:
            assert step == "fail" and error.filename == str(target)
        assert (target.read_text() if target.exists() else None) == last
        if os.name == "posix":
            assert {p.name for p in folder.iterdir()} == {*(["out.jsonl"] if last else []), *others}


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_write_to_a_device_that_fails_raises_the_devices_error() -> None:
    """A path that is not a regular file is written in place, as a stream: when the device refuses (/dev/full: no
    space), the writer's OSError reaches the caller as it is (it was swallowed inside the check of the path's type,
    and the write then failed as "generator didn't stop")."""
    import errno

    import evalbridge as eb
    from evalbridge.io.text import replacing

    with pytest.raises(OSError) as raised:
        with replacing("/dev/full") as path, open(path, "w") as stream:
            stream.write("x" * 100_000)
    assert raised.value.errno == errno.ENOSPC
    with pytest.raises(OSError) as raised:
        eb.write(eb.Run({"q1": {f"d{i}": float(i) for i in range(5000)}}), "/dev/full", format="trec")
    assert raised.value.errno == errno.ENOSPC
