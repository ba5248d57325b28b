"""``jaxblitz-train``'s entry point (and ``python -m jaxblitz``): Blitz 4 from the
command line, :mod:`jaxblitz.cli`.

It imports nothing heavy itself, so that Ctrl-C while JAX, orbax and matplotlib
load exits as Ctrl-C at any other moment does: 130, one line, no traceback.
"""

import os
import signal
import sys


def _interrupted(signum, frame) -> None:
    # Exits here, not by raising KeyboardInterrupt: an exception raised inside
    # jaxlib's module set-up unwinds through its C++ and can crash the process
    # (a segmentation fault in about one Ctrl-C of eight, measured).
    print("jaxblitz-train: interrupted", file=sys.stderr, flush=True)
    os._exit(128 + signal.SIGINT)


def main(argv: list[str] | None = None) -> int:
    """Import :mod:`jaxblitz.cli` and run it; 130 if Ctrl-C stops the import."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:  # an ignored Ctrl-C stays ignored
        signal.signal(signal.SIGINT, _interrupted)
    try:
        from jaxblitz.cli import main as cli_main
    except KeyboardInterrupt:  # a Ctrl-C that came as an exception after all
        print("jaxblitz-train: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
    finally:
        if previous is not signal.SIG_IGN:  # (None: not set from Python)
            signal.signal(signal.SIGINT, previous or signal.default_int_handler)
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
