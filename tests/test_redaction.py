"""Property tests of the redaction module (hypothesis) and examples per detector."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stdnum import luhn

from memoryhub.privacy.redaction import PLACEHOLDER, find, placeholder, redact_json, redact_text, workspace_key

KEY = workspace_key("test-secret", 1)
OTHER_KEY = workspace_key("test-secret", 2)

FILLER_WORDS = ["the", "agent", "called", "a", "tool", "and", "result", "was", "fine", "then", "it", "moved", "on", "report", "ready", "."]
filler = st.lists(st.sampled_from(FILLER_WORDS), min_size=0, max_size=8).map(" ".join)


def card() -> st.SearchStrategy[str]:
    return st.text(alphabet=string.digits, min_size=15, max_size=15).map(lambda d: "4" + d[1:] + luhn.calc_check_digit("4" + d[1:]))


secrets = st.one_of(
    st.builds(lambda u, d: f"{u}@{d}.com", st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=10), st.text(alphabet=string.ascii_lowercase, min_size=2, max_size=10)),
    card(),
    st.ip_addresses(v=4).map(str),
    st.text(alphabet=string.ascii_uppercase + string.digits, min_size=16, max_size=16).map(lambda s: "AKIA" + s),
    st.text(alphabet=string.ascii_letters + string.digits, min_size=36, max_size=40).map(lambda s: "ghp_" + s),
    st.text(alphabet=string.ascii_letters + string.digits, min_size=8, max_size=20).map(lambda s: f"password={s}"),
    st.just("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    st.just("+1 415 555 2671"),
    st.just("DE89 3704 0044 0532 0130 00"),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_it_is_idempotent_and_leaves_nothing_to_find(text: str) -> None:
    once = redact_text(text, key=KEY).text
    assert redact_text(once, key=KEY).text == once
    assert find(once) == []


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_it_changes_only_what_it_matched(text: str) -> None:
    matches = find(text)
    rebuilt, position = [], 0
    for m in matches:
        rebuilt += [text[position : m.start], placeholder(m.kind, text[m.start : m.end], KEY)]
        position = m.end
    rebuilt.append(text[position:])
    assert redact_text(text, key=KEY).text == "".join(rebuilt)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(filler, secrets), min_size=1, max_size=5), filler)
def test_it_removes_every_secret_and_keeps_the_rest(pairs: list[tuple[str, str]], tail: str) -> None:
    text = "".join(f"{words} {secret} " for words, secret in pairs) + tail
    result = redact_text(text, key=KEY)
    for words, secret in pairs:
        value = secret.split("=", 1)[1] if secret.startswith("password=") else secret
        assert value not in result.text
        assert words in result.text
    assert tail in result.text
    assert sum(result.counts.values()) >= len(pairs)


def test_it_maps_a_value_to_one_placeholder_per_workspace() -> None:
    a = redact_text("mail ann@example.com twice: ann@example.com", key=KEY).text
    first, second = PLACEHOLDER.findall(a)
    assert first == second and first.startswith("[EMAIL_")
    assert redact_text("ann@example.com", key=OTHER_KEY).text != first


def test_it_recognises_each_kind() -> None:
    samples = {
        "EMAIL": "write to bob.smith@example.co.uk today",
        "PHONE": "call +44 20 7946 0958 now",
        "CARD": "card 4111-1111-1111-1111 ok",
        "IBAN": "iban GB82 WEST 1234 5698 7654 32 ok",
        "IPV4": "host 10.0.0.12 up",
        "IPV6": "host 2001:db8::1 up",
        "AWS_ACCESS_KEY": "key AKIAIOSFODNN7EXAMPLE here",
        "AWS_SECRET": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "JWT": "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----",
        "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "SLACK_TOKEN": "xoxb-1234567890-abcdefghij",
        "STRIPE_KEY": "sk_live_abcdefghijklmnop1234",
        "GOOGLE_API_KEY": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "BEARER_TOKEN": "Authorization: Bearer abcdefghijklmnop123456",
        "URL_CREDENTIALS": "postgres://admin:hunter2@db.internal/app",
        "SECRET": "api_key: zzz999abc",
    }
    for kind, text in samples.items():
        result = redact_text(text, key=KEY)
        assert result.counts[kind] == 1, (kind, result.text, result.counts)


def test_it_leaves_lookalikes_alone() -> None:
    for text in ("order 4111 1111 1111 1112", "version 2024 of 12 items", "GB00 INVALID", "user at example dot com", "999.1.1.1"):
        assert redact_text(text, key=KEY).text == text


def test_it_redacts_json_keys_values_and_secret_fields() -> None:
    value = {"to": "ann@example.com", "password": "plain words", "n": 3, "nested": [{"auth": "Bearer abcdefghijklmnop123456"}]}
    redacted, counts = redact_json(value, key=KEY)
    assert redacted["to"].startswith("[EMAIL_") and redacted["password"].startswith("[SECRET_") and redacted["n"] == 3
    assert redacted["nested"][0]["auth"].startswith("Bearer [BEARER_TOKEN_")
    assert counts == {"EMAIL": 1, "SECRET": 1, "BEARER_TOKEN": 1}
