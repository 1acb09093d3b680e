"""``python -m evalbridge`` and the ``evalbridge`` console script: the command line, guarded against Ctrl-C from its
first line (the command line's modules are imported inside the guard)."""

from __future__ import annotations

import sys


def run() -> None:
    """Run the command line with ``sys.argv`` and exit with its code; Ctrl-C while it loads exits 130."""
    try:
        from .cli import main
    except KeyboardInterrupt:  # Ctrl-C while the command line loads: nothing was read or written yet
        print("evalbridge: interrupted before the command started; nothing was written", file=sys.stderr)
        sys.exit(130)
    sys.exit(main())


if __name__ == "__main__":
    run()
