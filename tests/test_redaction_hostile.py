"""Redaction in linear time: hostile text cannot hold the hub's CPU.

A backtracking pattern with an unbounded run that may start at many places costs the
square of the text when nothing matches ("a." * n + " @" against the e-mail pattern:
80 KB took 5.4 s, a 10 MB tool output hours). For every detector, the input that is
worst for its shape must take about 4x as long at 1 MB as at 256 KB (16x would be
quadratic) and stay within a fixed budget. CPU time, best of three, so a busy machine
does not make a linear detector look slow."""

from __future__ import annotations

import time

import pytest

from memoryhub.privacy.redaction import DETECTORS, redact_text, workspace_key

# For each detector, texts made to start (and fail) as many matches as possible.
HOSTILE: dict[str, list[tuple[str, str]]] = {
    "PRIVATE_KEY": [("-----BEGIN RSA PRIVATE KEY-----\n", "")],
    "JWT": [("eyJabcde-", ""), ("eyJabcde.eyJabcde.", "")],
    "URL_CREDENTIALS": [("a.", " ://"), ("a+", "://a:b")],
    "AWS_ACCESS_KEY": [("AKIA", "")],
    "AWS_SECRET": [("aws_secret_key= ", ""), ("aws_secret_access_key=\"", "")],
    "GITHUB_TOKEN": [("-ghp_", ""), ("-github_pat_" + "a" * 300, "")],
    "SLACK_TOKEN": [("xoxb-", ""), ("-xoxb-aaaaaaaaa", "")],
    "STRIPE_KEY": [("sk_live_", "")],
    "GOOGLE_API_KEY": [("AIza-", "")],
    "BEARER_TOKEN": [("bearer ", ""), ("bearer a.", "\t" * 10)],
    "SECRET": [("token: ", ""), ("password", " " * 1000)],
    "EMAIL": [("a.", " @"), ("a@b.", "")],
    "IBAN": [("DE00 ", "")],
    "CARD": [("1234 ", ""), ("1234-", "")],
    "IPV6": [("1:", ""), ("::", "")],
    "IPV4": [("1.", ""), ("255.255.", "")],
    "PHONE": [("+1 (", ""), ("555-123-", "")],
}
BUDGET_SECONDS = 2.0  # for 1 MB, per detector: this machine needs 0.3 s at most


def cpu_seconds(run: object, text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        run(text)
        best = min(best, time.process_time() - start)
    return best


def sized(unit: str, tail: str, size: int) -> str:
    return unit * (size // len(unit)) + tail


def test_every_detector_has_hostile_inputs() -> None:
    assert set(HOSTILE) == {name for name, _ in DETECTORS}


@pytest.mark.parametrize("name", [name for name, _ in DETECTORS])
def test_each_detector_is_linear_in_its_input(name: str) -> None:
    detector = dict(DETECTORS)[name]

    def run(text: str) -> None:
        list(detector(text, text.lower()))

    for unit, tail in HOSTILE[name]:
        small = cpu_seconds(run, sized(unit, tail, 256_000))
        large = cpu_seconds(run, sized(unit, tail, 1_000_000))
        assert large < BUDGET_SECONDS, f"{name} on {unit!r}: {large:.2f} s for 1 MB"
        # Below a few milliseconds the ratio is noise; quadratic growth is far above it.
        assert large < 0.02 or large / small < 8, f"{name} on {unit!r}: {small:.3f} s → {large:.3f} s (x{large / small:.1f})"


def test_redacting_a_hostile_megabyte_takes_seconds_not_hours() -> None:
    # All detectors at once, on the input the issue was found with.
    key = workspace_key("secret", 1)
    assert cpu_seconds(lambda text: redact_text(text, key=key), "a." * 500_000 + " @") < BUDGET_SECONDS
