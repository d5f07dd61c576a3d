"""Writes memoryhub_client/client.py (the sync `MemoryHub`) from aio.py (the async one):
one source for both clients' signatures, docstrings and operation table.

    python clients/python/scripts/unasync.py          # write client.py
    python clients/python/scripts/unasync.py --check  # exit 1 if client.py is stale
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "memoryhub_client"

HEADER = '''"""`MemoryHub`: the MemoryHub API over httpx.Client.

GENERATED from aio.py by clients/python/scripts/unasync.py: edit aio.py, then run the
script. Requests, retries, answers and event parsing live in _transport.py."""
'''

# Applied in order, each a regular expression over the whole text.
REPLACEMENTS = [
    (r"^import asyncio\n", ""),
    (r"\basyncio\.sleep\(", "time.sleep("),
    (r"\basync def __aenter__\b", "def __enter__"),
    (r"\basync def __aexit__\b", "def __exit__"),
    (r"\baclose\b", "close"),
    (r"\baiter_lines\b", "iter_lines"),
    (r"\baread\b", "read"),
    (r"\basync (def|with|for)\b", r"\1"),
    (r"\bawait ", ""),
    (r"\bAsync([A-Z]\w*)", r"\1"),
]


def unasync(source: str) -> str:
    docstring_end = source.index('"""', 3) + 3
    text = HEADER + source[docstring_end + 1:]
    for pattern, replacement in REPLACEMENTS:
        text = re.sub(pattern, replacement, text, flags=re.MULTILINE)
    return text


def main() -> int:
    generated = unasync((PACKAGE / "aio.py").read_text())
    target = PACKAGE / "client.py"
    if "--check" in sys.argv[1:]:
        if not target.exists() or target.read_text() != generated:
            print(f"{target} is stale: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    target.write_text(generated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
