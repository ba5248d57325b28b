"""Headless Chromium, driven over the DevTools protocol on a pipe.

``Chromium`` starts Debian's ``chromium --headless --remote-debugging-pipe``: the
browser reads commands from its file descriptor 3 and writes answers and events to
its descriptor 4, each a JSON object ended by a NUL byte, so nothing beyond the
standard library is needed (no websocket client, no Selenium or Playwright). Every
host but 127.0.0.1 resolves to nothing: a page that reaches for the network fails
to load it instead of touching it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time


def find_chromium() -> str | None:
    """The Chromium binary on the PATH (Debian names it ``chromium``), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


# Runs in the child: the two pipe ends onto the descriptors the browser reads and
# writes, then the browser itself (a shell cannot: dash maps single digits only).
_ON_FDS_3_AND_4 = (
    "import os, sys\n"
    "os.dup2(int(sys.argv[1]), 3)\n"
    "os.dup2(int(sys.argv[2]), 4)\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)


def _high_fd(fd: int) -> int:
    """``fd`` moved to 10 or above: mapped onto 3 or 4, it clobbers neither."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class Chromium:
    """One headless browser with one tab; ``load(url)`` then ``evaluate(js)``."""

    def __init__(self, binary: str, timeout: float = 30):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="chromium-")
        to_browser, self._commands = os.pipe()
        self._answers, from_browser = os.pipe()
        to_browser, from_browser = _high_fd(to_browser), _high_fd(from_browser)
        args = [
            "--headless",
            "--no-sandbox",  # root in a container has no user namespaces for it
            "--disable-gpu",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile}",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--no-first-run",
            "about:blank",
        ]
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _ON_FDS_3_AND_4]
            + [str(to_browser), str(from_browser), binary, *args],
            pass_fds=(to_browser, from_browser),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # D-Bus and GPU chatter of a headless run
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._events: list[dict] = []
        self._id = 0
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.send(
            "Target.attachToTarget", targetId=target, flatten=True
        )["sessionId"]
        self.send("Page.enable", session=True)
        self.send("Runtime.enable", session=True)

    # -- the protocol ---------------------------------------------------------------
    def _message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium exited ({self._proc.poll()})")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def send(self, method: str, session: bool = False, **params) -> dict:
        """Send a command and return its result; events met meanwhile are kept."""
        self._id += 1
        command: dict = {"id": self._id, "method": method, "params": params}
        if session:
            command["sessionId"] = self._session
        os.write(self._commands, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._message(deadline)
            if message.get("id") != self._id:
                self._events.append(message)
                continue
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            return message["result"]

    def _wait_event(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == method:
                    del self._events[: i + 1]
                    return event
            self._events.append(self._message(deadline))

    # -- what the tests use ---------------------------------------------------------
    def load(self, url: str) -> None:
        """Open ``url`` in the tab and wait for its load event (images included)."""
        self._events.clear()
        result = self.send("Page.navigate", session=True, url=url)
        if result.get("errorText"):
            raise RuntimeError(f"{url}: {result['errorText']}")
        self._wait_event("Page.loadEventFired")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        result = self.send(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            awaitPromise=True,
            returnByValue=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.send("Browser.close")  # unless it is gone already
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._commands)
        os.close(self._answers)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
