"""A support agent on the OpenAI Agents SDK whose conversation lives in MemoryHub.

    pip install "./clients/python[openai-agents]"
    MEMORYHUB_URL=http://127.0.0.1:8000 MEMORYHUB_API_KEY=mha_… \\
        python examples/openai_agents/support_agent.py --session ticket-7 --user ann "Where is order 1042?"

Every run is a new process: what the agent knows of the conversation (earlier turns, the
tool calls it made and their results) it reads back from the hub, where operators watch it
on the session's timeline. The model is a scripted stand-in (no network, no key) unless
OPENAI_API_KEY is set; then `--model` (default gpt-4.1-mini) answers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
from typing import Any

from agents import Agent, Model, RunConfig, Runner, function_tool
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from memoryhub_client import AsyncMemoryHub
from memoryhub_client.integrations.openai_agents import MemoryHubSession

ORDERS = {"1042": "shipped on Monday, arriving Thursday", "2071": "waiting for the warehouse"}


@function_tool
def order_status(order_id: str) -> str:
    """Where an order is."""
    return ORDERS.get(order_id, "unknown")


def user_texts(items: list[Any]) -> list[str]:
    texts = []
    for item in items:
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            texts.append(content if isinstance(content, str) else " ".join(part.get("text", "") for part in content))
    return texts


def scripted_reply(call: ModelCall) -> Any:
    """A model that reads only what it is given: the history the session handed over."""
    items = call.input if isinstance(call.input, list) else [{"role": "user", "content": call.input}]
    last = items[-1]
    if isinstance(last, dict) and last.get("type") == "function_call_output":
        order = last["call_id"].split("_")[1]
        return [assistant_message(f"Order {order} is {last['output']}.")]
    asked = user_texts(items)
    if re.search(r"what did I ask", asked[-1], re.I):
        return [assistant_message(f"You first asked: {asked[0]}" if len(asked) > 1 else "This is your first question.")]
    if match := re.search(r"order (\d+)", asked[-1], re.I):
        turn = sum(1 for item in items if isinstance(item, dict) and item.get("type") == "function_call")
        return [function_call("order_status", {"order_id": match[1]}, call_id=f"call_{match[1]}_{turn}")]
    return [assistant_message("Noted.")]


def model(name: str) -> Model | str:
    if os.environ.get("OPENAI_API_KEY"):
        return name
    return ScriptedModel([ModelStep.respond(scripted_reply) for _ in range(8)])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message")
    parser.add_argument("--session", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--model", default="gpt-4.1-mini")
    args = parser.parse_args()
    async with AsyncMemoryHub(base_url=os.environ.get("MEMORYHUB_URL", "http://127.0.0.1:8000"), api_key=os.environ["MEMORYHUB_API_KEY"]) as hub:
        session = MemoryHubSession(args.session, hub=hub, user_id=args.user)
        print(f"history: {len(await session.get_items())} items")
        agent = Agent(name="support", instructions="Answer questions about orders.", tools=[order_status], model=model(args.model))
        result = await Runner.run(agent, args.message, session=session, run_config=RunConfig(tracing_disabled=True))
        print(f"agent: {result.final_output}")


if __name__ == "__main__":
    asyncio.run(main())
