"""`pip install memoryhub-client` alone pulls none of the frameworks: they come with the
extras only, and importing the client imports none of them."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import CLIENT_DIR, REPOSITORY

FRAMEWORKS = {"openai-agents", "openai", "anthropic", "google-adk", "crewai", "llama-index-core", "pydantic-ai-slim", "langgraph"}


UV = str(REPOSITORY / ".venv" / "bin" / "uv")


def resolved(target: str, venv: str) -> set[str]:
    """The distributions uv would install for `target` into the empty environment `venv`."""
    done = subprocess.run([UV, "pip", "install", "--dry-run", "--python", f"{venv}/bin/python", target], capture_output=True, text=True, check=True)
    return {match[1].lower() for match in re.finditer(r"^ \+ ([A-Za-z0-9_.-]+)(?:==| @ )", done.stderr + done.stdout, re.M)}


def test_it_installs_without_any_framework(tmp_path: object) -> None:
    venv = f"{tmp_path}/empty"
    subprocess.run([UV, "venv", "--quiet", "--python", sys.executable, venv], check=True)
    plain = resolved(str(CLIENT_DIR), venv)
    assert "memoryhub-client" in plain and "httpx" in plain
    assert plain.isdisjoint(FRAMEWORKS), plain & FRAMEWORKS
    with_extra = resolved(f"{CLIENT_DIR}[pydantic-ai]", venv)
    assert "pydantic-ai-slim" in with_extra and "openai-agents" not in with_extra


def test_importing_the_client_imports_no_framework() -> None:
    code = ("import sys, memoryhub_client, memoryhub_client.integrations; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in {'agents', 'anthropic', 'google', 'crewai', 'llama_index', 'pydantic_ai', 'langgraph'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
