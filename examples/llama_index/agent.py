"""An assistant on LlamaIndex that remembers its users across conversations in MemoryHub.

    pip install "./clients/python[llama-index]"
    MEMORYHUB_URL=http://127.0.0.1:8000 MEMORYHUB_API_KEY=mha_… \\
        python examples/llama_index/agent.py --session chat-1 --user ann "My dog is called Rex."
    … python examples/llama_index/agent.py --session chat-2 --user ann "What do you remember about me?"

Every run is a new process and a new conversation: LlamaIndex's `Memory` keeps the conversation's
recent turns itself (in memory here), and its MemoryHubMemoryBlock keeps what leaves them as the
user's hub memories, which operators review in the console. When the conversation ends, the turns
still in short-term memory go to the hub too. Each prompt gets what the hub remembers about the
user that the latest messages are about. The model is a scripted stand-in (LlamaIndex's
MockFunctionCallingLLM: no network, no key) unless OPENAI_API_KEY is set; then `--model` (default
gpt-4.1-mini, with `pip install llama-index-llms-openai`) answers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
from collections.abc import Sequence
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.sql import MessageStatus

from memoryhub_client import AsyncMemoryHub
from memoryhub_client.integrations.llama_index import MemoryHubMemoryBlock


def scripted_reply(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """A model that knows only its prompt: the memories the block put in it, and the question."""
    prompt = "\n".join(message.content or "" for message in messages if message.role.value == "system")
    told = re.findall(r"^user: (.+)$", prompt, re.M)
    if (messages[-1].content or "").rstrip().endswith("?"):
        return ChatMessage(role="assistant", content=f"You told me: {' '.join(told)}" if told else "I don't know anything about you yet.")
    return ChatMessage(role="assistant", content="Noted.")


def llm(name: str) -> Any:
    if os.environ.get("OPENAI_API_KEY"):
        from llama_index.llms.openai import OpenAI  # pip install llama-index-llms-openai

        return OpenAI(model=name)
    return MockFunctionCallingLLM(response_generator=scripted_reply)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message")
    parser.add_argument("--session", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--model", default="gpt-4.1-mini")
    args = parser.parse_args()
    async with AsyncMemoryHub(base_url=os.environ.get("MEMORYHUB_URL", "http://127.0.0.1:8000"), api_key=os.environ["MEMORYHUB_API_KEY"]) as hub:
        block = MemoryHubMemoryBlock(hub=hub, user_id=args.user)
        memory = Memory.from_defaults(session_id=args.session, token_limit=4_000, memory_blocks=[block])
        agent = FunctionAgent(llm=llm(args.model), system_prompt="You are a helpful assistant. Use what you remember about the user.")
        response = await agent.run(user_msg=args.message, memory=memory)
        print(f"agent: {response}")
        # The conversation ends here: what short-term memory still holds is remembered too.
        await block.aput(await memory.aget_all(status=MessageStatus.ACTIVE), session_id=args.session)


if __name__ == "__main__":
    asyncio.run(main())
