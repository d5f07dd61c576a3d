"""A support agent on Google ADK whose sessions and memory live in MemoryHub.

    pip install "./clients/python[google-adk]"
    MEMORYHUB_URL=http://127.0.0.1:8000 MEMORYHUB_API_KEY=mha_… \\
        python examples/adk/agent.py --session ticket-7 --user ann "Where is order 1042?"

Every run is a new process: the session (its events, the tool calls the agent made and
their results, its state) comes back from the hub, where operators watch it on the
session's timeline; at the end of each run the session is added to the user's memory,
which the agent's `load_memory` tool searches. The model is a scripted stand-in (no
network, no key) unless GOOGLE_API_KEY is set; then `--model` (default gemini-2.5-flash)
answers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools import load_memory
from google.genai import types

from memoryhub_client import AsyncMemoryHub
from memoryhub_client.integrations.adk import MemoryHubMemoryService, MemoryHubSessionService

APP = "support"
ORDERS = {"1042": "shipped on Monday, arriving Thursday", "2071": "waiting for the warehouse"}


def order_status(order_id: str) -> str:
    """Where an order is."""
    return ORDERS.get(order_id, "unknown")


class ScriptedModel(BaseLlm):
    """A model that reads only what it is given: the history the session handed over."""

    model: str = "scripted"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(content=types.Content(role="model", parts=[self.reply(llm_request.contents)]))

    @staticmethod
    def reply(contents: list[types.Content]) -> types.Part:
        last = contents[-1].parts[-1] if contents and contents[-1].parts else types.Part(text="")
        if last.function_response is not None:
            return types.Part(text=f"Order {last.function_response.id.split('-')[1]} is {last.function_response.response['result']}.")
        asked = [p.text for c in contents if c.role == "user" for p in c.parts or [] if p.text]
        if asked and re.search(r"what did I ask", asked[-1], re.I):
            return types.Part(text=f"You first asked: {asked[0]}" if len(asked) > 1 else "This is your first question.")
        if asked and (match := re.search(r"order (\d+)", asked[-1], re.I)):
            turn = sum(1 for c in contents for p in c.parts or [] if p.function_call)
            return types.Part(function_call=types.FunctionCall(id=f"call-{match[1]}-{turn}", name="order_status", args={"order_id": match[1]}))
        return types.Part(text="Noted.")


def model(name: str) -> Any:
    return name if os.environ.get("GOOGLE_API_KEY") else ScriptedModel()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message")
    parser.add_argument("--session", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--model", default="gemini-2.5-flash")
    args = parser.parse_args()
    async with AsyncMemoryHub(base_url=os.environ.get("MEMORYHUB_URL", "http://127.0.0.1:8000"), api_key=os.environ["MEMORYHUB_API_KEY"]) as hub:
        sessions, memory = MemoryHubSessionService(hub=hub), MemoryHubMemoryService(hub=hub)
        session = await sessions.get_session(app_name=APP, user_id=args.user, session_id=args.session)
        if session is None:
            session = await sessions.create_session(app_name=APP, user_id=args.user, session_id=args.session, state={"user:name": args.user})
        print(f"history: {len(session.events)} events")
        agent = LlmAgent(
            name="support", model=model(args.model), instruction="Answer questions about orders.", tools=[order_status, load_memory],
            output_key="last_answer",
        )
        runner = Runner(agent=agent, app_name=APP, session_service=sessions, memory_service=memory)
        message = types.Content(role="user", parts=[types.Part(text=args.message)])
        answer = ""
        async for event in runner.run_async(user_id=args.user, session_id=args.session, new_message=message):
            if event.is_final_response() and event.content and event.content.parts:
                answer = "".join(part.text or "" for part in event.content.parts)
        done = await sessions.get_session(app_name=APP, user_id=args.user, session_id=args.session)
        await memory.add_session_to_memory(done)
        print(f"agent: {answer}")


if __name__ == "__main__":
    asyncio.run(main())
