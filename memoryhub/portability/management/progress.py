"""Progress of the export and import commands on a terminal."""

from __future__ import annotations

import sys
import time
from typing import Any


class TerminalProgress:
    """Rows written out of all, and the rate, on one line rewritten in place on a terminal;
    a line every 10 seconds otherwise (a log keeps them all)."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.started, self.shown = stream, time.monotonic(), 0.0
        self.live = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.shown < (0.2 if self.live else 10.0) and done < total:
            return
        self.shown = now
        rate = done / max(now - self.started, 1e-6)
        line = f"  {done:,} of {total:,} records ({100 * done / max(total, 1):.0f}%), {rate:,.0f} records/s"
        self.stream.write(f"\r{line}" if self.live else line, ending="" if self.live else "\n")
        self.stream.flush()

    def end(self) -> None:
        if self.live:
            self.stream.write("")
