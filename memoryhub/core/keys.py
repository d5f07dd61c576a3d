"""Key format: `mha_<prefix>_<secret>` for agents, `mho_<prefix>_<secret>` for operators.

The prefix is a public lookup handle (indexed, unique); the secret is 256 random bits.
The underscores make the kind visible at a glance and let secret scanners match keys.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string
from dataclasses import dataclass

AGENT_KEY_KIND = "mha"
OPERATOR_KEY_KIND = "mho"
KEY_KINDS = (AGENT_KEY_KIND, OPERATOR_KEY_KIND)


@dataclass(frozen=True)
class NewKey:
    kind: str
    prefix: str
    secret: str

    @property
    def plaintext(self) -> str:
        return f"{self.kind}_{self.prefix}_{self.secret}"

    @property
    def digest(self) -> str:
        return key_digest(self.plaintext)


@dataclass(frozen=True)
class ParsedKey:
    kind: str
    prefix: str
    plaintext: str


# Letters and digits only: keys survive copy-paste (double-click selects the whole key).
_ALPHABET = string.ascii_letters + string.digits
_SECRET_LENGTH = 43  # 43 × log2(62) ≈ 256 bits


def generate_key(kind: str) -> NewKey:
    secret = "".join(secrets.choice(_ALPHABET) for _ in range(_SECRET_LENGTH))
    return NewKey(kind=kind, prefix=secrets.token_hex(6), secret=secret)


def key_digest(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()


def parse_key(plaintext: str) -> ParsedKey | None:
    parts = plaintext.split("_", 2)
    if len(parts) != 3 or parts[0] not in KEY_KINDS or len(parts[1]) != 12 or not parts[2]:
        return None
    return ParsedKey(kind=parts[0], prefix=parts[1], plaintext=plaintext)


def digest_matches(plaintext: str, stored_digest: str) -> bool:
    return hmac.compare_digest(key_digest(plaintext), stored_digest)


def looks_like_key(value: str) -> bool:
    return parse_key(value) is not None
