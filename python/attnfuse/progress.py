"""What a compile is doing, while it does it.

Every stage of `attnfuse.compile` and `compile_generator` (torch.export of
each function, writing its MLIR, a cache hit or `attn-compile`, loading the
library, packing weights) is logged on the logger "attnfuse": INFO when a
stage ends, with its time; DEBUG when it starts. Python's logging shows
none of it until the application configures a handler.

A compile can also show its stages on stderr, one status line redrawn in
place (the stage and the seconds since the compile started), drawn only
once the compile has run for `DELAY` seconds, so that a cache hit shows
nothing. Whether it is shown: the `progress=` argument of the compile when
it is given, else `ATTNFUSE_PROGRESS` (`1` on, `0` off), else whether
stderr is a terminal. Forced on for a stream that is not a terminal
(`progress=True` or `ATTNFUSE_PROGRESS=1` with stderr redirected), each
stage is one line as it starts and the total the last, with no carriage
return and no delay. Nothing is ever written to stdout (the command
line writes MLIR and libraries there).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time

logger = logging.getLogger("attnfuse")

# Seconds a compile runs before the status line appears.
DELAY = 2.0
# Seconds between redraws of the status line while a stage runs.
TICK = 0.5


def wanted(progress=None, stream=None) -> bool:
    """Whether to draw the status line: `progress` when it is a bool,
    else `ATTNFUSE_PROGRESS` when set to 0 or 1, else whether `stream`
    (stderr by default) is a terminal."""
    if progress is not None:
        return bool(progress)
    env = os.environ.get("ATTNFUSE_PROGRESS", "").strip()
    if env in ("0", "1"):
        return env == "1"
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Progress:
    """The stages of one compile (`what`: "compile", "compile_generator"),
    logged and, when `wanted(progress, stream)`, drawn on `stream` (stderr
    by default). Use `stage(name)` around each stage and `note(text)` for
    an event that takes no time (a cache hit); `close()` (or `with`) ends
    the display."""

    def __init__(self, what: str, progress=None, stream=None, delay=DELAY):
        self.what = what
        self.stream = sys.stderr if stream is None else stream
        self.display = wanted(progress, self.stream)
        self.interactive = self.display and _isatty(self.stream)
        self.start = time.monotonic()
        self.delay = delay
        self.current = None
        self.shown = False  # a status line was drawn
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._ticker = None
        if self.display and self.interactive:
            self._ticker = threading.Thread(target=self._tick, daemon=True,
                                            name="attnfuse-progress")
            self._ticker.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close(failed=exc[0] is not None)
        return False

    @contextlib.contextmanager
    def stage(self, name: str):
        """Logs and shows the stage `name` while the block runs."""
        logger.debug("%s: %s ...", self.what, name)
        began = time.monotonic()
        with self._lock:
            self.current = name
            self._line_if_plain(f"{name} ...")
        try:
            yield
        finally:
            took = time.monotonic() - began
            logger.info("%s: %s took %.2f s", self.what, name, took)
            with self._lock:
                self.current = None

    def note(self, text: str):
        """An event of the compile (a cache hit), logged and shown."""
        logger.info("%s: %s", self.what, text)
        with self._lock:
            self._line_if_plain(text)

    def close(self, failed: bool = False):
        """Ends the display: the status line gets its final state (the
        total time) where one was drawn."""
        if self._done.is_set():
            return
        self._done.set()
        if self._ticker is not None:
            self._ticker.join()
        total = time.monotonic() - self.start
        logger.info("%s: %s in %.2f s", self.what,
                    "failed" if failed else "done", total)
        with self._lock:
            if self.shown:
                end = "failed" if failed else "done"
                erase = "\r\x1b[K" if self.interactive else ""
                self._write(f"{erase}[attnfuse] {self.what}: {end} in "
                            f"{total:.1f} s\n")

    # ---- drawing ------------------------------------------------------------
    def _elapsed(self) -> float:
        return time.monotonic() - self.start

    def _line_if_plain(self, text: str):
        """On a stream that is not a terminal (a display forced on), one
        line per event (the lock is held)."""
        if self.display and not self.interactive:
            self.shown = True
            self._write(f"[attnfuse] {self.what}: {text} "
                        f"({self._elapsed():.1f} s)\n")

    def _tick(self):
        """Redraws the status line every TICK seconds once `delay` has
        passed, until `close`."""
        while not self._done.wait(TICK):
            if self._elapsed() < self.delay:
                continue
            with self._lock:
                if self._done.is_set():
                    return
                stage = self.current or "..."
                self.shown = True
                self._write(f"\r\x1b[K[attnfuse] {self.what}: {stage} "
                            f"{self._elapsed():.1f} s")

    def _write(self, text: str):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream
            self.display = False


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def stage_of(progress, name: str):
    """`progress.stage(name)`, or nothing where there is no Progress."""
    if progress is None:
        return contextlib.nullcontext()
    return progress.stage(name)
