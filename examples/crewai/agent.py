"""A CrewAI support crew whose long-term memory lives in MemoryHub.

    pip install "./clients/python[crewai]"
    MEMORYHUB_URL=http://127.0.0.1:8000 MEMORYHUB_API_KEY=mha_… \\
        python examples/crewai/agent.py --user ann "I prefer email over phone. My parcels go to the Berlin office."
    MEMORYHUB_URL=… MEMORYHUB_API_KEY=… python examples/crewai/agent.py --user ann "How should you contact me?"

Every run is a new process and a new crew. CrewAI's own memory does the work: before the
task it recalls what it knows about the customer, after it extracts what is worth keeping
and remembers it; `MemoryHubStorage` keeps those memories in the hub, where operators
review, correct, purge and export them. So the second run answers from what the first was
told.

The model is a scripted stand-in (no network, no key) unless OPENAI_API_KEY is set; then
`--model` (default gpt-4.1-mini) answers, and OpenAI's text-embedding-3-small embeds. The
stand-in leaves embedding to the hub (`storage.embedder()`), so no embedding model runs
here either.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from typing import Any

# CrewAI sends telemetry and offers trace uploads unless told not to; the example stays local.
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from crewai.memory import Memory  # noqa: E402
from crewai.utilities.i18n import I18N_DEFAULT  # noqa: E402

from memoryhub_client import MemoryHub  # noqa: E402
from memoryhub_client.integrations.crewai import MemoryHubStorage  # noqa: E402


class ScriptedLLM(BaseLLM):
    """A stand-in model that reads only what CrewAI gives it: the prompts of memory's
    analysis steps, and the task with the memories recalled for it."""

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> str:
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        system = str(messages[0].get("content", "")) if messages[0].get("role") == "system" else ""
        prompt = str(messages[-1].get("content", ""))
        if system == I18N_DEFAULT.memory("extract_memories_system"):
            # Worth keeping: what the customer stated (their questions are not facts).
            said = re.search(r"The customer says: (.*)", prompt)
            sentences = re.split(r"(?<=[.!?])\s+", said[1].strip()) if said else []
            return json.dumps({"memories": [f"The customer said: {s}" for s in sentences if s and not s.endswith("?")]})
        if system == I18N_DEFAULT.memory("save_system"):
            return json.dumps({"suggested_scope": "/customer", "categories": ["customer-fact"], "importance": 0.8})
        if system == I18N_DEFAULT.memory("consolidation_system"):
            return json.dumps({"actions": [], "insert_new": True})
        if system == I18N_DEFAULT.memory("query_system"):
            return json.dumps({"recall_queries": [prompt.split("\n", 1)[0].removeprefix("Query: ")], "complexity": "simple"})
        # The agent's turn: the task, and the memories CrewAI recalled for it.
        remembered = re.findall(r"^- \(score=[\d.]+\) The customer said: (.*)$", prompt, re.M)
        if "?" not in prompt.split("The customer says:", 1)[-1].split("\n", 1)[0]:
            answer = "Noted, thank you."
        elif remembered:
            answer = "From what you told us before: " + " ".join(remembered)
        else:
            answer = "I don't know that yet."
        return f"Thought: I can answer from the task and the memories.\nFinal Answer: {answer}"

    def supports_function_calling(self) -> bool:
        return False  # memory's analysis asks for JSON in the text, which is what this answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message")
    parser.add_argument("--user", required=True)
    parser.add_argument("--model", default="gpt-4.1-mini")
    args = parser.parse_args()
    real = bool(os.environ.get("OPENAI_API_KEY"))
    with MemoryHub(base_url=os.environ.get("MEMORYHUB_URL", "http://127.0.0.1:8000"), api_key=os.environ["MEMORYHUB_API_KEY"]) as hub:
        storage = MemoryHubStorage(hub=hub, user_id=args.user)
        memory = Memory(
            storage=storage,
            llm=LLM(model=args.model) if real else ScriptedLLM(model="scripted"),
            embedder=storage.embedder({"provider": "openai", "config": {"model_name": "text-embedding-3-small"}} if real else None),
        )
        print(f"memories: {storage.count()}")
        agent = Agent(
            role="Support agent", goal="Answer the customer, using what they told us before.",
            backstory="You look after one customer and remember what they tell you.", llm=memory.llm,
        )
        task = Task(description=f"The customer says: {args.message}", expected_output="A short reply to the customer.", agent=agent)
        result = Crew(agents=[agent], tasks=[task], memory=memory).kickoff()
        print(f"agent: {result.raw}")
        # The crew remembers in the background: wait for it before the process ends.
        memory.close()


if __name__ == "__main__":
    main()
