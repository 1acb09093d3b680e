"""Every output flag against what may already be at its path: writes go only to regular files or to
folders evalbridge made, ``-`` is standard output for single files, and nothing else is touched.

One table: output flag x what is there (a FIFO, a character device, a symlink, a read-only file, a
read-only folder, ``-``, a missing parent folder) -> the behaviour docs/outputs.md documents.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from evalbridge.cli import main
from evalbridge.errors import InputError, OutputError
from evalbridge.reports.report_folder import ReportFolder
from evalbridge.reports.writing import check_outputs, output_file, write_file_atomic

QRELS = "q1 0 d1 1\nq2 0 d2 1\n"
RUN = "q1 Q0 d1 1 0.9 bm25\nq1 Q0 d3 2 0.5 bm25\nq2 Q0 d3 1 0.8 bm25\nq2 Q0 d2 2 0.2 bm25\n"
CONFIG = """\
title: outputs
runs:
  faq:
    format: pairs
    data:
      q1: [[d1, d3], [d1]]
      q2: [[d3, d2], [d2]]
metrics: [mrr]
gates:
  mrr: ">= 0.5"
output:
  dir: reports/demo
  formats: [markdown]
"""


def _inputs(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    paths = {"qrels": folder / "qrels.txt", "run": folder / "bm25.txt", "config": folder / "eval.yaml",
             "pairs": folder / "pairs.json"}
    paths["qrels"].write_text(QRELS)
    paths["run"].write_text(RUN)
    paths["config"].write_text(CONFIG)
    paths["pairs"].write_text(json.dumps({"q1": [["d1", "d3"], ["d1"]], "q2": [["d3", "d2"], ["d2"]]}))
    return paths


#: flag -> (the command line writing to OUTPUT, whether OUTPUT is a report folder)
FLAGS: dict[str, tuple[Callable[[dict[str, Path], str], list[str]], bool]] = {
    "eval -o": (lambda i, out: ["eval", str(i["qrels"]), str(i["run"]), "-m", "mrr", "-o", out], False),
    "eval --per-query": (lambda i, out: ["eval", str(i["qrels"]), str(i["run"]), "-m", "mrr", "-o",
                                         str(i["qrels"].parent.parent / "report.txt"), "--per-query", out], False),
    "check -o": (lambda i, out: ["check", str(i["qrels"]), str(i["run"]), "-m", "mrr", "--backends", "pytrec_eval",
                                 "-o", out], False),
    "agree -o": (lambda i, out: ["agree", str(i["qrels"]), str(i["qrels"]), "--names", "a", "b", "-o", out], False),
    "convert OUTPUT": (lambda i, out: ["convert", str(i["run"]), out, "--kind", "run"], False),
    "convert --run-output": (lambda i, out: ["convert", str(i["pairs"]), str(i["qrels"].parent.parent / "q.txt"),
                                             "--from", "pairs", "--run-output", out], False),
    "run --junit": (lambda i, out: ["run", str(i["config"]), "-q", "--no-write", "--junit", out], False),
    "run --output-dir": (lambda i, out: ["run", str(i["config"]), "-q", "--output-dir", out], True),
}


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # the numbers of /dev/null, in a temp dir
    except PermissionError:
        pytest.skip("creating a character device needs root (CAP_MKNOD); not permitted here")


def _node_kept(kind: int) -> Callable[[Path], bool]:
    return lambda path: stat.S_IFMT(os.lstat(path).st_mode) == kind


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp dir as the working directory; read-only permissions are undone after the test."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for root, folders, _ in os.walk(tmp_path):
        for name in folders:
            os.chmod(Path(root, name), 0o755)


@pytest.mark.parametrize("flag", list(FLAGS))
@pytest.mark.parametrize("there", ["fifo", "device", "symlink", "read-only file", "read-only folder", "-",
                                   "missing parent"])
def test_every_output_flag_respects_what_is_at_its_path(place: Path, capsys: pytest.CaptureFixture, flag: str,
                                                        there: str) -> None:
    command, folder = FLAGS[flag]
    inputs = _inputs(place / "in")
    outside = sorted(os.listdir(place.parent))
    out = place / "out"
    refused, kept = None, None
    if there == "fifo":
        _fifo(out)
        refused, kept = "is a FIFO", _node_kept(stat.S_IFIFO)
    elif there == "device":
        _device(out)
        refused, kept = "is a character device", _node_kept(stat.S_IFCHR)
    elif there == "symlink":
        target = place / "target"
        if folder:
            target.mkdir()
        else:
            target.write_text("old")
        out.symlink_to(target)
    elif there == "read-only file":
        out.write_text("old")
        out.chmod(0o444)
        refused = "is a file" if folder else "is read-only"
        kept = lambda path: path.read_text() == "old"  # noqa: E731
    elif there == "read-only folder":
        parent = place / "locked"
        parent.mkdir()
        if folder:  # the report folder itself is read-only
            out = parent
            refused = "is read-only"
        else:  # the folder that would hold the file
            out = parent / "out"
            refused = "is read-only"
        parent.chmod(0o555)
        kept = lambda path: os.listdir(parent) == []  # noqa: E731
    elif there == "-":
        out = Path("-")
        if folder:
            refused = "standard output"
    elif there == "missing parent":
        out = place / "new" / "sub" / "out"
    code = main(command(inputs, str(out)))
    captured = capsys.readouterr()
    if refused is not None:
        assert code == 2, captured.err
        assert refused in captured.err and "Fix:" in captured.err, captured.err
        assert kept is None or kept(out)
    else:
        assert code == 0, captured.err
        if there == "symlink":
            assert out.is_symlink() and out.resolve() == place / "target"
            assert (place / "target" / "report.md").is_file() if folder else (place / "target").read_text() != "old"
        elif there == "-":
            assert not (place / "-").exists() and captured.out
        else:
            assert out.exists()
    assert sorted(os.listdir(place.parent)) == outside  # nothing outside the temp dir touched
    assert not [p for p in place.rglob(".tmp-*")]


def test_writing_onto_a_fifo_is_refused_before_the_block_runs(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InputError, match=r"is a FIFO \(named pipe\); evalbridge writes only regular files"):
        write_file_atomic(tmp_path / "pipe", "x")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)


def test_a_symlink_is_followed_and_kept(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("old")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    write_file_atomic(tmp_path / "link.md", "new")
    assert (tmp_path / "link.md").is_symlink() and (tmp_path / "real.md").read_text() == "new"
    assert output_file(tmp_path / "link.md") == tmp_path / "real.md"


def test_a_disk_full_write_names_the_path_and_the_fix_and_keeps_the_old_file(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.md"
    target.write_text("old")
    monkeypatch.setattr(os, "fsync", _full)
    with pytest.raises(OutputError) as raised:
        write_file_atomic(target, "new")
    assert raised.value.errno == errno.ENOSPC and isinstance(raised.value, OSError)
    assert str(raised.value).startswith(f"cannot write {str(target)!r}: the disk is full")
    assert "Fix: free some space" in str(raised.value) and ".tmp-" not in str(raised.value)
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["report.md"]


def _full(fd: int) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_in_a_report_folder_keeps_the_old_report(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    with ReportFolder(target) as folder:
        folder.write_text("report.md", "old")
    with pytest.raises(OutputError, match=r"cannot write '.*demo': the disk is full .*nothing was replaced"):
        with ReportFolder(target) as folder:
            raise OSError(errno.ENOSPC, "No space left on device", str(folder.path_for("report.md")))
    assert (target / "report.md").read_text() == "old"


def test_the_cli_turns_a_full_disk_into_exit_2_with_the_path(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = _inputs(tmp_path / "in")
    (tmp_path / "report.txt").write_text("old")
    monkeypatch.setattr(os, "fsync", _full)
    code = main(["eval", str(inputs["qrels"]), str(inputs["run"]), "-m", "mrr", "-o", str(tmp_path / "report.txt")])
    err = capsys.readouterr().err
    assert code == 2 and f"cannot write {str(tmp_path / 'report.txt')!r}: the disk is full" in err
    assert "Fix:" in err and "Traceback" not in err and (tmp_path / "report.txt").read_text() == "old"


def test_only_one_output_may_go_to_standard_output(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"more than one output goes to standard output"):
        check_outputs([], files=["-", "-"])


def test_eval_per_query_to_stdout_is_refused_when_the_report_is_there(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    inputs = _inputs(tmp_path / "in")
    code = main(["eval", str(inputs["qrels"]), str(inputs["run"]), "-m", "mrr", "--per-query", "-"])
    assert code == 2 and "more than one output goes to standard output" in capsys.readouterr().err


def test_a_file_size_limit_is_exit_2_naming_the_path_and_the_old_report_stays(tmp_path: Path) -> None:
    """A real failure of the file system (RLIMIT_FSIZE: writes past 64 bytes fail with EFBIG), in a child process."""
    import subprocess
    import sys

    inputs = _inputs(tmp_path / "in")
    report = tmp_path / "report.md"
    report.write_text("old")
    script = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64)); "
              "from evalbridge.cli import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", script, "eval", str(inputs["qrels"]), str(inputs["run"]), "-m", "mrr",
                           "--format", "markdown", "-o", str(report)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert f"cannot write {str(report)!r}: the file is larger than this system allows" in done.stderr
    assert "Fix: raise the limit" in done.stderr and "Traceback" not in done.stderr
    assert report.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["in", "report.md"]


def test_a_report_folder_under_a_read_only_folder_is_refused_before_any_work(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        with pytest.raises(InputError, match=r"the folder '.*locked' is read-only.*Fix: make it writable"):
            with ReportFolder(locked / "demo"):
                pass
        assert os.listdir(locked) == []  # no lock file, no temporary folder
    finally:
        locked.chmod(0o755)
