"""PII and secret redaction, offline: detectors with validators, typed placeholders.

Every match becomes `[TYPE_xxxxxxxx]`, where the suffix is a keyed hash of the value
(HMAC with a per-workspace key), so the same value maps to the same placeholder within
a workspace, never back to the value, and never to the same placeholder in another
workspace. Suffixes use letters only, so no detector (phone numbers, cards, IPs) can
match inside a placeholder: redacting twice changes nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import phonenumbers
import re2
from stdnum import iban as stdnum_iban
from stdnum import luhn

PLACEHOLDER = re.compile(r"\[[A-Z_]+_[a-z]{8}\]")
SUFFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
MASK = "\u00a4"  # ¤: neither a word character, a digit nor whitespace


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    kind: str


@dataclass
class RedactionResult:
    text: str
    counts: Counter = field(default_factory=Counter)


# --- Detectors: each yields (start, end) of the sensitive part of the text ---------------

# A detector gets the text and, once for all detectors, its lower-case copy.
Detector = Callable[[str, str], Iterator[tuple[int, int]]]


def _regex(
    pattern: str, group: int = 0, flags: int = 0, valid: Callable[[str], bool] | None = None, needs: tuple[str, ...] = (),
    linear: bool = False,
) -> Detector:
    """`needs`: substrings (lower case) one of which any match contains; a text with none
    of them is skipped without running the pattern (most texts hold no secrets at all).

    `linear`: run the pattern on RE2, whose time is linear in the text. Python's `re`
    backtracks: a pattern with an unbounded run that may start at many places (an
    e-mail's local part in "a.a.a.a…", a key's body after many BEGIN lines) costs the
    square of the text when nothing matches: 5 s for 80 KB, hours for a 10 MB tool
    output, with the hub's CPU held all along. RE2 has no lookaround, so the patterns
    that need it are written with bounded runs instead (tests/test_redaction_hostile.py
    holds every detector to linear time)."""
    compiled = re2.compile(pattern) if linear else re.compile(pattern, flags)

    def detect(text: str, lowered: str) -> Iterator[tuple[int, int]]:
        if needs and not any(n in lowered for n in needs):
            return
        for m in compiled.finditer(text):
            value = m.group(group)
            if value and not PLACEHOLDER.fullmatch(value) and (valid is None or valid(value)):
                yield m.start(group), m.end(group)

    return detect


def _card_valid(value: str) -> bool:
    digits = re.sub(r"[ -]", "", value)
    return 13 <= len(digits) <= 19 and luhn.is_valid(digits)


def _iban_valid(value: str) -> bool:
    return stdnum_iban.is_valid(value)


def _ipv4_valid(value: str) -> bool:
    # What ipaddress.ip_address accepts of the four dotted groups of 1-3 digits the
    # pattern matched (no leading zeros), without its exceptions for the rest: versions
    # and dotted ids are common in logs, and raising costs more than the check.
    return all(int(part) <= 255 and (len(part) == 1 or part[0] != "0") for part in value.split("."))


def _ipv6_valid(value: str) -> bool:
    # Eight groups, or fewer with "::": times like 12:05:13 never reach ipaddress.
    if "::" not in value and value.count(":") != 7:
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


# What could be a phone number: international (+…) anywhere, national in the usual
# 3-3-4 shapes. Dates, times, versions and ids never reach libphonenumber.
PHONE_CANDIDATE = re.compile(r"(?<![\w.+])(?:\+\d[\d ().-]{6,20}\d|\(?\d{3}\)?[ .-]?\d{3}[ .-]\d{4})(?![\w-])")


def _phones(text: str, lowered: str) -> Iterator[tuple[int, int]]:
    # libphonenumber is precise but slow on long texts: it only sees the stretches that
    # could be phone numbers. International numbers anywhere; national ones as written
    # in the default region.
    for candidate in PHONE_CANDIDATE.finditer(text):
        for match in phonenumbers.PhoneNumberMatcher(candidate.group(), "US", leniency=phonenumbers.Leniency.VALID):
            yield candidate.start() + match.start, candidate.start() + match.end


# Order matters where patterns overlap: the more specific kinds first (a JWT is not an
# assignment's value; an AWS key is not a card). Overlapping later matches are dropped.
DETECTORS: list[tuple[str, Detector]] = [
    ("PRIVATE_KEY", _regex(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----", needs=("private key",), linear=True
    )),
    ("JWT", _regex(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}", needs=("eyj",), linear=True)),
    ("URL_CREDENTIALS", _regex(
        r"\b[a-zA-Z][a-zA-Z0-9+.-]*://([^/\s:@\[\]]+:[^/\s@\[\]]+)@", group=1, needs=("://",), linear=True
    )),
    ("AWS_ACCESS_KEY", _regex(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[0-9A-Z]{16}\b", needs=("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva"))),
    ("AWS_SECRET", _regex(r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", group=1, needs=("secret",))),
    ("GITHUB_TOKEN", _regex(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b", needs=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"))),
    ("SLACK_TOKEN", _regex(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", needs=("xox",))),
    ("STRIPE_KEY", _regex(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b", needs=("_live_", "_test_"))),
    ("GOOGLE_API_KEY", _regex(r"\bAIza[0-9A-Za-z_-]{35}\b", needs=("aiza",))),
    ("BEARER_TOKEN", _regex(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)", group=1, needs=("bearer",))),
    ("SECRET", _regex(
        r"(?i)\b(?:password|passwd|pwd|secret|client_secret|token|access_token|refresh_token|api[_-]?key)\b[\"']?\s*[:=]\s*[\"']?"
        r"(?!\[[A-Z_]+_[a-z]{8}\])([^\s\"',;&)\]}]{3,})",
        group=1,
        needs=("pass", "pwd", "secret", "token", "api_key", "api-key", "apikey"),
    )),
    ("EMAIL", _regex(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b", needs=("@",), linear=True)),
    # The next three start with a character class and check the word boundary just after
    # it (`X(?<!\wX)` is `\bX`): Python's re then skips ahead to candidate characters
    # instead of trying the whole pattern at every position (2-4x faster on logs).
    ("IBAN", _regex(r"[A-Z](?<!\w[A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b", valid=_iban_valid)),
    # Cards as people write them: digits alone, or groups of four (4-6-5 for Amex).
    ("CARD", _regex(
        r"\d(?<!\w\d)\d{3}(?:\d{9,15}|(?:([ -])\d{4}){2}(?:\1\d{4})?(?:\1\d{1,3})?|([ -])\d{6}\2\d{5})\b", valid=_card_valid
    )),
    ("IPV6", _regex(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:]|\.\d)", valid=_ipv6_valid, needs=("::", ":"))),
    ("IPV4", _regex(r"\d(?<!\w\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}\b", valid=_ipv4_valid)),
    ("PHONE", _phones),
]


def find(text: str) -> list[Match]:
    """Non-overlapping matches, by detector priority, in text order."""
    taken: list[Match] = []
    masked = text
    covered = bytearray(len(text))  # 1 where an earlier match is: overlap checks in C
    lowered = text.lower()
    for kind, detect in DETECTORS:
        found = []
        for start, end in detect(masked, lowered):
            if 1 in covered[start:end]:
                continue
            covered[start:end] = b"\x01" * (end - start)
            found.append(Match(start, end, kind))
        # Later detectors see earlier matches blanked out (same length, so offsets hold):
        # a phone number next to a card number is then still a phone number.
        if found:
            pieces, position = [], 0
            for m in sorted(found, key=lambda m: m.start):
                pieces += [masked[position : m.start], MASK * (m.end - m.start)]
                position = m.end
            pieces.append(masked[position:])
            masked = "".join(pieces)
        taken += found
    return sorted(taken, key=lambda m: m.start)


def workspace_key(secret: str, workspace_id: int | str, *, purpose: str = "redaction") -> bytes:
    """A key of one workspace for one purpose, derived from `secret`: a placeholder or
    hash made in one workspace means nothing in another."""
    return hmac.new(secret.encode(), f"{purpose}:{workspace_id}".encode(), hashlib.sha256).digest()


def pseudonym_key(workspace_id: int | str, *, purpose: str = "redaction") -> bytes:
    """`workspace_key` of the deployment's pseudonymisation key (settings), which unlike
    SECRET_KEY is never rotated: pseudonyms stored today must match tomorrow's."""
    from django.conf import settings

    return workspace_key(settings.MEMORYHUB_PSEUDONYM_KEY, workspace_id, purpose=purpose)


def redactor(*, workspace_id: int | str, enabled: bool) -> Callable[[str], str]:
    """Text as a workspace keeps it: redacted under its pseudonym key if `enabled` (the
    workspace's setting for that kind of record), else as sent. The key is derived once,
    for a whole batch."""
    if not enabled:
        return lambda text: text
    key = pseudonym_key(workspace_id)
    return lambda text: redact_text(text, key=key).text


def json_redactor(*, workspace_id: int | str, enabled: bool) -> Callable[[Any], Any]:
    """`redactor` for JSON values: every string in them, keys too (`redact_json`)."""
    if not enabled:
        return lambda value: value
    key = pseudonym_key(workspace_id)
    return lambda value: redact_json(value, key=key)[0]


# byte b -> the letter SUFFIX_ALPHABET[b % 26], for bytes.translate.
_SUFFIX_TABLE = bytes(ord(SUFFIX_ALPHABET[b % 26]) for b in range(256))


def placeholder(kind: str, value: str, key: bytes) -> str:
    digest = hmac.digest(key, f"{kind}:{value}".encode(), "sha256")
    return f"[{kind}_{digest[:8].translate(_SUFFIX_TABLE).decode()}]"


def redact_text(text: str, *, key: bytes) -> RedactionResult:
    matches = find(text)
    if not matches:
        return RedactionResult(text=text)
    parts = []
    counts: Counter = Counter()
    seen: dict[tuple[str, str], str] = {}  # logs repeat the same address or email many times
    position = 0
    for m in matches:
        parts.append(text[position : m.start])
        found = (m.kind, text[m.start : m.end])
        if (replacement := seen.get(found)) is None:
            replacement = seen[found] = placeholder(m.kind, found[1], key)
        parts.append(replacement)
        counts[m.kind] += 1
        position = m.end
    parts.append(text[position:])
    return RedactionResult(text="".join(parts), counts=counts)


def redact_json(value: Any, *, key: bytes, counts: Counter | None = None) -> tuple[Any, Counter]:
    """Every string in a JSON value redacted (keys too); the structure is kept."""
    counts = Counter() if counts is None else counts
    if isinstance(value, str):
        result = redact_text(value, key=key)
        counts.update(result.counts)
        return result.text, counts
    if isinstance(value, list):
        return [redact_json(item, key=key, counts=counts)[0] for item in value], counts
    if isinstance(value, dict):
        redacted = {}
        for k, v in value.items():
            new_key = redact_json(k, key=key, counts=counts)[0] if isinstance(k, str) else k
            # A value under a key that names a secret is a secret whatever it looks like.
            if isinstance(k, str) and SECRET_KEY_NAMES.search(k) and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                redacted[new_key] = placeholder("SECRET", str(v), key)
                counts["SECRET"] += 1
            else:
                redacted[new_key] = redact_json(v, key=key, counts=counts)[0]
        return redacted, counts
    return value, counts


SECRET_KEY_NAMES = re.compile(r"(?i)^(?:password|passwd|pwd|secret|client_secret|token|access_token|refresh_token|api[_-]?key|authorization)$")
