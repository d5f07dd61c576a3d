"""Drop-in memory for agent frameworks, each installed by its extra of `memoryhub-client`:

| module | extra | class |
|---|---|---|
| `memoryhub_client.integrations.openai_agents` | `openai-agents` | `MemoryHubSession` |
| `memoryhub_client.integrations.anthropic` | `anthropic` | `MemoryHubMemoryTool`, `AsyncMemoryHubMemoryTool` |
| `memoryhub_client.integrations.adk` | `google-adk` | `MemoryHubMemoryService`, `MemoryHubSessionService` |
| `memoryhub_client.integrations.crewai` | `crewai` | `MemoryHubStorage` |
| `memoryhub_client.integrations.llama_index` | `llama-index` | `MemoryHubMemoryBlock` |
| `memoryhub_client.integrations.pydantic_ai` | `pydantic-ai` | `MemoryHubHistory`, `MemoryHubConversationStore` |

Nothing here is imported by `memoryhub_client` itself: a plain install pulls no framework.
"""
