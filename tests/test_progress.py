"""Progress bars: drawn for long calls on a terminal when asked, never on a pipe, a file or when not asked."""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys


import evalbridge as eb
from evalbridge.common import progress

SETUP = """
import sys
import evalbridge as eb
qrels = {f"q{i}": {"d1": 1, "d2": 2} for i in range(30)}
run = {f"q{i}": {"d1": 0.5, "d2": 0.4, "d3": 0.4} for i in range(30)}
"""
CALLS = SETUP + """
eb.evaluate(qrels, run, ["P@1", "nDCG@3"], progress={flag})
eb.crosscheck(qrels, run, ["P@1"], backends=["pytrec_eval", "ir_measures"], progress={flag})
print("rich imported:", "rich" in sys.modules)
"""
NESTED = SETUP + """
from evalbridge.common.progress import callback
with callback(True, total=2) as on_step:
    on_step("outer step", 0, 2)
    eb.evaluate(qrels, run, ["P@1"], progress=True)
    on_step("outer done", 1, 2)
print("nested ok")
"""


def _run_on_terminal(code: str) -> tuple[str, str]:
    """Run ``code`` with stderr on a pseudo-terminal; (what the terminal received, stdout)."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    for name in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=slave, env=env)
    os.close(slave)
    received = bytearray()
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            received += chunk
    finally:
        os.close(master)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, received.decode(errors="replace")
    return received.decode(errors="replace"), out.decode()


def test_long_calls_draw_their_steps_on_a_terminal() -> None:
    """With progress=True and stderr on a terminal, evaluate shows its steps and crosscheck one step per
    backend; the bar is transient (erased at the end)."""
    terminal, out = _run_on_terminal(CALLS.replace("{flag}", "True"))
    for step in ("reading the qrels and the run", "computing 2 metrics with reference", "reference column",
                 "cross-checking pytrec_eval", "cross-checking ir_measures"):
        assert step in terminal, step
    assert terminal.endswith("\x1b[?25h\r\x1b[1A\x1b[2K")  # cursor shown again, the bar's line erased
    assert "rich imported: True" in out


def test_nothing_is_drawn_on_a_pipe_even_when_asked() -> None:
    """progress=True with stderr on a pipe: stderr stays empty and rich is never imported."""
    done = subprocess.run([sys.executable, "-c", CALLS.replace("{flag}", "True")], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stderr == ""
    assert "rich imported: False" in done.stdout


def test_nothing_is_drawn_on_a_terminal_when_not_asked() -> None:
    """progress=False (the default of the Python API): the terminal receives nothing."""
    terminal, out = _run_on_terminal(CALLS.replace("{flag}", "False"))
    assert terminal == ""
    assert "rich imported: False" in out


def test_a_call_inside_another_bar_adds_its_line_to_it() -> None:
    """evaluate(progress=True) inside a caller's bar draws its steps in the same display (no second live
    display, no error)."""
    terminal, out = _run_on_terminal(NESTED)
    assert "outer step" in terminal and "reading the qrels and the run" in terminal
    assert "nested ok" in out


def test_steps_count_and_stay_silent_off_a_terminal() -> None:
    """A StringIO is not a terminal: nothing is written, every step is counted, never beyond the total."""
    stream = io.StringIO()
    with progress.steps(2, enabled=True, stream=stream) as bar:
        assert not bar.shown
        for name in ("one", "two", "three"):
            bar.step(name)
    assert (bar.done, bar.total, stream.getvalue()) == (2, 2, "")


def test_a_callback_is_none_unless_enabled_on_a_terminal() -> None:
    """callback() gives None for a disabled bar, a non-terminal and a closed stream."""
    closed = io.StringIO()
    closed.close()
    for enabled, stream in ((False, sys.stderr), (True, io.StringIO()), (True, closed)):
        with progress.callback(enabled, stream=stream) as on_step:
            assert on_step is None


def test_progress_changes_no_number() -> None:
    """The same evaluation and cross-check with and without progress give equal results."""
    qrels, run = {"q1": {"a": 1, "b": 2}}, {"q1": {"a": 0.2, "b": 0.9, "c": 0.5}}
    assert eb.evaluate(qrels, run, ["nDCG@3"], progress=True) == eb.evaluate(qrels, run, ["nDCG@3"])
    assert eb.crosscheck(qrels, run, ["P@2"], backends=["pytrec_eval"], progress=True) == \
        eb.crosscheck(qrels, run, ["P@2"], backends=["pytrec_eval"])
