"""``print`` and ``sys.stderr`` for a component built without WASI: lines
go to the host's log through the WIT ``log`` import (stdout at ``info``,
stderr at ``warn``), so nothing a plugin prints is lost or traps."""

import sys


class _LogStream:
    """A text stream that sends each complete line to the host's log."""

    def __init__(self, log, level):
        self._log = log
        self._level = level
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._log.log(self._level, line)
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._log.log(self._level, self._pending)
            self._pending = ""

    def writable(self) -> bool:
        return True


def install(log) -> None:
    """Points ``sys.stdout`` and ``sys.stderr`` at the host's log."""
    sys.stdout = _LogStream(log, log.Level.INFO)
    sys.stderr = _LogStream(log, log.Level.WARN)
