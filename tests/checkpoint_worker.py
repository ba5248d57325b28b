"""Saves checkpoints in a loop until killed; used by tests/test_crash_safety.py.

    python tests/checkpoint_worker.py DIR

Checkpoint ``s`` holds arrays filled from ``s`` (see :func:`state_for`), so a
reader can tell whether a restored checkpoint is whole. Prints ``start s`` before
and ``done s SECONDS`` after each save.
"""

import sys
import time

import numpy as np

from jaxblitz.checkpoints import Checkpointer


def state_for(step: int) -> dict:
    return {
        "w": np.full((256, 512), step, np.float32),  # 512 KiB: a save takes a while
        "b": np.arange(10, dtype=np.float32) + step,
        "step": np.array(step, np.int32),
    }


def main(directory: str) -> None:
    checkpointer = Checkpointer(directory, keep=2)
    start = (checkpointer.latest_step() or 0) + 1
    for step in range(start, start + 10_000):
        print("start", step, flush=True)
        t0 = time.perf_counter()
        checkpointer.save(step, state_for(step), {"step": step})
        print("done", step, time.perf_counter() - t0, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
