"""``jaxblitz-train``'s entry point (and ``python -m jaxblitz``): Blitz 4 from the
command line, :mod:`jaxblitz.cli`.

It imports nothing heavy itself, so that Ctrl-C while JAX, orbax and matplotlib
load exits as Ctrl-C at any other moment does: 130, one line, no traceback.
"""

import signal
import sys


def main(argv: list[str] | None = None) -> int:
    """Import :mod:`jaxblitz.cli` and run it; 130 if Ctrl-C stops the import."""
    try:
        from jaxblitz.cli import main as cli_main
    except KeyboardInterrupt:
        print("jaxblitz-train: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
