"""A support agent on Pydantic AI whose conversation lives in MemoryHub.

    pip install "./clients/python[pydantic-ai]"
    MEMORYHUB_URL=http://127.0.0.1:8000 MEMORYHUB_API_KEY=mha_… \\
        python examples/pydantic_ai/agent.py --session ticket-7 --user ann "Where is order 1042?"

Every run is a new process: the history it gives the agent (earlier turns, the tool calls it
made and their results) it loads from the hub, and it saves the run's messages back, where
operators watch them on the session's timeline. The model is a scripted stand-in (Pydantic
AI's FunctionModel: no network, no key) unless OPENAI_API_KEY is set; then `--model` (default
openai:gpt-4.1-mini) answers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from memoryhub_client import AsyncMemoryHub
from memoryhub_client.integrations.pydantic_ai import MemoryHubHistory

ORDERS = {"1042": "shipped on Monday, arriving Thursday", "2071": "waiting for the warehouse"}


def order_status(order_id: str) -> str:
    """Where an order is."""
    return ORDERS.get(order_id, "unknown")


def scripted_reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A model that reads only what it is given: the history loaded from the hub, and the new prompt."""
    last = messages[-1].parts[-1]
    if isinstance(last, ToolReturnPart):
        return ModelResponse(parts=[TextPart(f"Order {last.tool_call_id.split('_')[1]} is {last.content}.")])
    asked = [part.content for message in messages if isinstance(message, ModelRequest)
             for part in message.parts if isinstance(part, UserPromptPart) and isinstance(part.content, str)]
    if re.search(r"what did I ask", asked[-1], re.I):
        return ModelResponse(parts=[TextPart(f"You first asked: {asked[0]}" if len(asked) > 1 else "This is your first question.")])
    if match := re.search(r"order (\d+)", asked[-1], re.I):
        return ModelResponse(parts=[ToolCallPart("order_status", {"order_id": match[1]}, tool_call_id=f"call_{match[1]}_{len(messages)}")])
    return ModelResponse(parts=[TextPart("Noted.")])


def model(name: str) -> Any:
    if os.environ.get("OPENAI_API_KEY"):
        return name
    return FunctionModel(scripted_reply)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message")
    parser.add_argument("--session", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--model", default="openai:gpt-4.1-mini")
    args = parser.parse_args()
    agent = Agent(model(args.model), instructions="Answer questions about orders.", tools=[order_status])
    async with AsyncMemoryHub(base_url=os.environ.get("MEMORYHUB_URL", "http://127.0.0.1:8000"), api_key=os.environ["MEMORYHUB_API_KEY"]) as hub:
        history = MemoryHubHistory(args.session, hub=hub, user_id=args.user)
        earlier = await history.aload()
        print(f"history: {len(earlier)} messages")
        result = await agent.run(args.message, message_history=earlier)
        await history.asave(result.all_messages())
        print(f"agent: {result.output}")


if __name__ == "__main__":
    asyncio.run(main())
