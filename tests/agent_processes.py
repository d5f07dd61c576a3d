"""Example agents as processes of their own, against a live hub: run one to its end (or
its crash), start one in the background, and decide its approval as the operator. For
examples/support_agent.py, its LangGraph version, and any other example with the same
command line (`--hub`, `--key`, `--session`, `--crash-after-step`)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryhub_client import MemoryHub
from memoryhub_client.models import Approval

from tests.conftest import poll

BASE_DIR = Path(__file__).resolve().parent.parent
SUPPORT_AGENT = BASE_DIR / "examples" / "support_agent.py"
LANGGRAPH_SUPPORT_AGENT = BASE_DIR / "examples" / "langgraph_support_agent.py"


@dataclass
class AgentRun:
    returncode: int
    output: str


class AgentProcess:
    """An example agent running in the background; `finish()` waits for its end."""

    def __init__(self, script: Path, arguments: list[str], *, hub_url: str, api_key: str, env: dict[str, str] | None = None) -> None:
        environment = {**os.environ, "MEMORYHUB_URL": hub_url, "MEMORYHUB_API_KEY": api_key, "PYTHONUNBUFFERED": "1", **(env or {})}
        environment.pop("DJANGO_SETTINGS_MODULE", None)  # the agent is a client, not the hub
        self.process = subprocess.Popen(
            [sys.executable, str(script), *arguments], cwd=BASE_DIR, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True,
        )

    def finish(self, timeout: float = 60) -> AgentRun:
        try:
            output, _ = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            output, _ = self.process.communicate()
            raise AssertionError(f"the agent did not finish within {timeout:.0f} s:\n{output}") from None
        return AgentRun(self.process.returncode, output)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


def run_agent(script: Path, arguments: list[str], *, hub_url: str, api_key: str, timeout: float = 60, **options: Any) -> AgentRun:
    return AgentProcess(script, arguments, hub_url=hub_url, api_key=api_key, **options).finish(timeout)


def decide_when_pending(
    operator: MemoryHub, session_id: str, decision: str = "approve", *, agent: AgentProcess | None = None, timeout: float = 60,
    **fields: Any,
) -> Approval:
    """As the operator: waits until the session has a pending approval, then decides it
    (`fields`: args for an edit, reason, remember). Fails early if `agent` exits first."""
    def pending() -> list[Approval]:
        if agent is not None and agent.process.poll() is not None:
            raise AssertionError(f"the agent exited ({agent.process.returncode}) without asking:\n{agent.finish().output}")
        return list(operator.approvals.iter(status="pending", session_id=session_id))

    found = poll(pending, timeout=timeout, interval=0.1)
    assert found, f"no approval request in session {session_id} within {timeout:.0f} s"
    return operator.approvals.decide(found[0].id, decision, **fields)


def run_with_decision(
    script: Path, arguments: list[str], *, operator: MemoryHub, session_id: str, decision: str, hub_url: str, api_key: str,
    timeout: float = 60, **fields: Any,
) -> tuple[AgentRun, Approval]:
    """Runs the agent to its end while, as the operator, deciding the approval it asks
    for in `session_id` (`fields` as for decide_when_pending)."""
    agent = AgentProcess(script, arguments, hub_url=hub_url, api_key=api_key)
    try:
        decided = decide_when_pending(operator, session_id, decision, agent=agent, timeout=timeout, **fields)
        return agent.finish(timeout), decided
    finally:
        agent.stop()
