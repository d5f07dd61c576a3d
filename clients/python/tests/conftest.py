"""Fixtures of the framework adapters' tests (`make test-adapters`): the live hub that
tests/adapters_hub.py serves, and named actors on it. Each test's `agent` is a new agent
with a store of its own, so tests share the hub but none of its data; `teammate` is
another agent on the same store, `outsider` one in the foreign workspace; `operator` is
the workspace's admin."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from memoryhub_client import MemoryHub

HUB_URL = os.environ.get("MEMORYHUB_TEST_URL", "")
CLIENT_DIR = Path(__file__).resolve().parent.parent
REPOSITORY = CLIENT_DIR.parent.parent


def pytest_configure(config: pytest.Config) -> None:
    if not HUB_URL:
        raise pytest.UsageError("the adapters' tests run against a live hub: `make test-adapters` (tests/adapters_hub.py) serves one")


@dataclass
class Actors:
    url: str
    agent_key: str
    teammate_key: str
    outsider_key: str
    operator_key: str
    store: str

    def hub(self, key: str | None = None) -> MemoryHub:
        return MemoryHub(base_url=self.url, api_key=key or self.agent_key)


def issue_agent_key(admin_key: str, *, agent: str, store: str) -> str:
    response = httpx.post(f"{HUB_URL}/api/v1/keys", json={"agent": agent, "store": store, "label": "adapter test"},
                          headers={"Authorization": f"Bearer {admin_key}"}, timeout=30)
    response.raise_for_status()
    return response.json()["key"]


@pytest.fixture
def actors() -> Actors:
    admin, foreign_admin = os.environ["MEMORYHUB_TEST_ADMIN_KEY"], os.environ["MEMORYHUB_TEST_FOREIGN_ADMIN_KEY"]
    tag = uuid.uuid4().hex[:10]
    store = f"s-{tag}"
    return Actors(
        url=HUB_URL, store=store, operator_key=admin,
        agent_key=issue_agent_key(admin, agent=f"agent-{tag}", store=store),
        teammate_key=issue_agent_key(admin, agent=f"teammate-{tag}", store=store),
        outsider_key=issue_agent_key(foreign_admin, agent=f"outsider-{tag}", store=store),
    )


@pytest.fixture
def hub(actors: Actors) -> Iterator[MemoryHub]:
    with actors.hub() as client:
        yield client


@pytest.fixture
def operator(actors: Actors) -> Iterator[MemoryHub]:
    with actors.hub(actors.operator_key) as client:
        yield client


def unique(prefix: str) -> str:
    """An id no other test uses (session ids are unique per workspace)."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def run_example(actors: Actors, script: str, *args: str, timeout: float = 90) -> str:
    """What an example agent (`script`, from the repository's root) printed, run as a process
    of its own against this hub with the test's agent key and no model keys (so on its
    stand-in model); it must succeed."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(MEMORYHUB_URL=actors.url, MEMORYHUB_API_KEY=actors.agent_key, PYTHONPATH=str(CLIENT_DIR))
    done = subprocess.run([sys.executable, str(REPOSITORY / script), *args], env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done.stdout
