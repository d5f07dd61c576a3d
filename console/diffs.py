"""What changed between two texts, for people: word by word (memories are a sentence or a
paragraph, where a line diff would mark the whole thing changed)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

# Words with the space after them, so that joined back the pieces are the text itself.
WORDS = re.compile(r"\S+\s*|\s+")


@dataclass(frozen=True)
class Piece:
    text: str
    kind: str  # "same", "add" or "del"


def word_diff(old: str, new: str) -> list[Piece]:
    """`new` against `old`: the same words, the deleted and the added, in reading order."""
    before, after = WORDS.findall(old), WORDS.findall(new)
    pieces: list[Piece] = []
    for op, a1, a2, b1, b2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if op == "equal":
            pieces.append(Piece("".join(before[a1:a2]), "same"))
            continue
        if op in ("delete", "replace"):
            pieces.append(Piece("".join(before[a1:a2]), "del"))
        if op in ("insert", "replace"):
            pieces.append(Piece("".join(after[b1:b2]), "add"))
    return pieces
