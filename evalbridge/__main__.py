"""``python -m evalbridge``: the same as the ``evalbridge`` command."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    try:
        from .cli import main
    except KeyboardInterrupt:  # Ctrl-C while the command line loads: nothing was read or written yet
        print("evalbridge: interrupted before the command started; nothing was written", file=sys.stderr)
        sys.exit(130)
    sys.exit(main())
