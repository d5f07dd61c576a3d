"""`format: "slack"` (docs/notifications.md, "Slack"): a Slack incoming-webhook message that
Slack's Block Kit rules accept, whatever an agent named its tool or put in its args, with
a button to the request in the console. The receiver is a local server that answers as
Slack does: 400 `invalid_blocks` for a message breaking a rule (tests/slack_rules.py)."""

from __future__ import annotations

import json

import pytest

from memoryhub.core.jobs import JobStatus
from memoryhub.notifications.models import WebhookDelivery
from memoryhub.notifications.pump import deliveries_send
from memoryhub.notifications.services import EndpointInput, webhook_create
from tests.conftest import Actors, api_client
from tests.slack_rules import message_problems
from tests.webhook_receiver import Answer, Receiver


@pytest.fixture
def slack(receiver: Receiver) -> Receiver:
    """The receiver, answering as Slack does."""
    receiver.answer = lambda index: Answer(400 if message_problems(receiver.received[index].json) else 200)
    return receiver


def test_the_rules_catch_what_slack_refuses() -> None:
    assert message_problems({"text": "x", "blocks": [{"type": "header", "text": {"type": "mrkdwn", "text": "x"}}]})
    assert message_problems({"blocks": []}) == ["text: the fallback text is missing"]
    assert message_problems({"text": "x", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}]})
    two = {"type": "button", "action_id": "a", "text": {"type": "plain_text", "text": "b"}}
    assert message_problems({"text": "x", "blocks": [{"type": "actions", "elements": [two, two]}]})


@pytest.mark.parametrize("include_content", [False, True])
def test_an_approval_reaches_slack_as_a_message_it_accepts(actors: Actors, slack: Receiver, include_content: bool) -> None:
    webhook_create(membership=actors.owner, item=EndpointInput(
        url=slack.url, events=["approval.requested"], format="slack", include_content=include_content,
    ))
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    prefix = "<!channel> *refund* <https://evil.example.com|click> "
    tool = prefix + "t" * (200 - len(prefix))  # the longest name an agent may give a tool
    args = {"note": "<@U123> & " + "x" * 5000}
    asked = bot.post("/api/v1/approvals", {"session_id": "s1", "tool": tool, "args": args, "context": "Duplicate charge."}, format="json")
    assert asked.status_code == 201, asked.content
    approval = asked.json()
    assert deliveries_send() == 1
    [got] = slack.received
    body = got.json
    assert message_problems(body) == [], message_problems(body)
    assert WebhookDelivery.objects.get().status == JobStatus.DONE
    assert body["text"].startswith("Approval needed: bot asks to run")
    button = next(block for block in body["blocks"] if block["type"] == "actions")["elements"][0]
    assert button["url"] == f"https://hub.example.com/approvals/{approval['id']}/"
    shown = json.dumps(body["blocks"])
    assert "<!channel>" not in shown and "<@U123>" not in shown and "<https://evil" not in shown  # nothing becomes a mention or a link
    assert ("Duplicate charge." in shown) is include_content
