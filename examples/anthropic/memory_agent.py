"""An assistant on Claude whose memory directory (Claude's memory tool) lives in MemoryHub.

    pip install "./clients/python[anthropic]"
    MEMORYHUB_URL=http://127.0.0.1:8000 MEMORYHUB_API_KEY=mha_… \\
        python examples/anthropic/memory_agent.py --user ann "Remember that I prefer window seats"
    … python examples/anthropic/memory_agent.py --user ann "What do you remember about me?"

Every run is a new process: what Claude knows of the user it reads from its /memories
directory, whose files are the user's memories in the hub, where operators read, revise,
revert and quarantine them. Claude is a scripted stand-in (no network, no key) unless
ANTHROPIC_API_KEY is set; then `--model` answers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
from typing import Any

import httpx2
from anthropic import Anthropic, DefaultHttpxClient

from memoryhub_client import MemoryHub
from memoryhub_client.integrations.anthropic import MemoryHubMemoryTool

FILE = "/memories/preferences.md"
SYSTEM = "You are a personal assistant. Keep what you learn about the user in your memory directory."


def text_of(content: Any) -> str:
    """A message's or a tool result's text (a string, or blocks)."""
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content if isinstance(block, dict))


def scripted_reply(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a careful Claude would do next, reading only the conversation it is sent: look at
    its memory directory first, then write down what it is told or answer from what it kept."""
    asked = text_of(messages[0]["content"])
    calls = {block["id"]: block["input"] for m in messages if m["role"] == "assistant" for block in m["content"] if block["type"] == "tool_use"}
    results = [(calls[block["tool_use_id"]], text_of(block.get("content", ""))) for m in messages if m["role"] == "user"
               for block in (m["content"] if isinstance(m["content"], list) else []) if block["type"] == "tool_result"]
    if not results:
        return [memory({"command": "view", "path": "/memories"})]
    listing = results[0][1]
    seen = {json.dumps(call, sort_keys=True): result for call, result in results}
    file_view = seen.get(json.dumps({"command": "view", "path": FILE}, sort_keys=True))
    if FILE in listing and file_view is None:
        return [memory({"command": "view", "path": FILE})]
    if learnt := re.match(r"remember (?:that )?(.+?)\.?$", asked, re.I):
        fact = f"- {learnt[1]}"
        if not any(call["command"] in ("create", "insert") for call, _ in results):
            if file_view is None:
                return [memory({"command": "create", "path": FILE, "file_text": f"# Preferences\n{fact}\n"})]
            kept = [row.split("\t", 1)[1] for row in file_view.splitlines()[1:]]
            while kept and not kept[-1]:
                kept.pop()
            return [memory({"command": "insert", "path": FILE, "insert_line": len(kept), "insert_text": f"{fact}\n"})]
        return [text(f"Noted: {learnt[1]}.")]
    if file_view is None:
        return [text("I don't know anything about you yet.")]
    facts = [row.split("\t", 1)[1][2:] for row in file_view.splitlines()[1:] if "\t- " in row]
    return [text("I remember that " + "; ".join(facts) + ".")]


tool_ids = itertools.count(1)


def memory(command: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{next(tool_ids)}", "name": "memory", "input": command}


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


# Each reply's conversation up to it, by message id, as the API keeps a message thread.
conversations: dict[str, list[dict[str, Any]]] = {}


def scripted_claude(request: httpx2.Request) -> httpx2.Response:
    """The Messages API as the scripted Claude answers it. The SDK's tool runner threads its
    requests where the API can: a request then carries only what is new since the reply it
    continues (`thread.previous_message_id`), otherwise the whole conversation."""
    body = json.loads(request.content)
    history = conversations.get((body.get("thread") or {}).get("previous_message_id", ""), []) + body["messages"]
    content = scripted_reply(history)
    message_id = f"msg_{len(conversations) + 1}"
    conversations[message_id] = [*history, {"role": "assistant", "content": content}]
    return httpx2.Response(200, json={
        "id": message_id, "type": "message", "role": "assistant", "model": body["model"], "content": content,
        "stop_reason": "tool_use" if content[-1]["type"] == "tool_use" else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    })


def claude() -> Anthropic:
    if os.environ.get("ANTHROPIC_API_KEY"):
        return Anthropic()
    return Anthropic(api_key="scripted", http_client=DefaultHttpxClient(transport=httpx2.MockTransport(scripted_claude)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message")
    parser.add_argument("--user", required=True)
    parser.add_argument("--model", default="claude-sonnet-5-5")
    args = parser.parse_args()
    with MemoryHub(base_url=os.environ.get("MEMORYHUB_URL", "http://127.0.0.1:8000"), api_key=os.environ["MEMORYHUB_API_KEY"]) as hub:
        runner = claude().beta.messages.tool_runner(
            model=args.model, max_tokens=1024, system=SYSTEM, messages=[{"role": "user", "content": args.message}],
            tools=[MemoryHubMemoryTool(hub=hub, user_id=args.user)], betas=["context-management-2025-06-27"],
        )
        for message in runner:  # each of Claude's turns; the runner answers its tool calls in between
            for block in message.content:
                if block.type == "tool_use":
                    print(f"memory: {block.input['command']} {block.input.get('path', block.input.get('old_path', ''))}")
                elif block.type == "text":
                    print(f"claude: {block.text}")


if __name__ == "__main__":
    main()
