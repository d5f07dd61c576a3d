"""Foreign formats: ChatGPT and Claude conversation exports and Mem0 memories, read into
neutral records (ImportedSession, ImportedMessage, ImportedMemory) that an importer stores.

Pure functions over a byte stream: no database, no Django, no network. Each parser reads
the whole file with `json.loads` (exports run to tens of MB; ijson is not a dependency),
checks and converts every item, and only then returns an iterator over the records, so
a refused file yields nothing and an importer never stores half of it.

Where the shapes come from
--------------------------
ChatGPT (Settings → Data controls → Export data → `conversations.json`): a JSON list of
conversations {id | conversation_id, title, create_time (epoch seconds), mapping: {node id:
{id, message, parent, children}}, current_node, default_model_slug, ...}; a message is
{author: {role, name}, create_time, content: {content_type, parts | text | result | ...},
metadata: {is_visually_hidden_from_conversation, model_slug, ...}, recipient}. Checked
against the parsers and notes of mohamed-chs/convoviz (models/message.py, message_logic.py,
models/conversation.py: it walks current_node → parent with a seen-set, as we do),
mitkury/chatgpt-export-parser (its chatgpt-data-export-format.md),
TomzxCode/llm-conversations-viewer (its formats.md) and chathub-dev/chathub (the
`code` → text, `tether_browsing_display` → result content shapes).

Claude (claude.ai Settings → Export data → `conversations.json`): a JSON list of
{uuid, name, created_at, updated_at, chat_messages: [{uuid, sender: "human" | "assistant",
text, content: [{type: "text", text} | {type: "thinking" | "tool_use" | "tool_result", ...}],
created_at, attachments: [{file_name, file_type, file_size, extracted_content}],
files: [{file_name}]}]}. Checked against Sinity/polylogue (chatmd/importers/claude_ai.py,
its providers/claude-ai.md), TomzxCode/llm-conversations-viewer and published JSON
schemas of the export. Conversations saved from claude.ai's own API by browser exporters
also carry current_leaf_message_uuid and per-message parent_message_uuid; when both are
there we keep only the branch ending at that leaf, as for ChatGPT.

Mem0: what `Memory.get_all()` (open source, mem0/memory/main.py: {"results": [{id, memory,
hash, metadata, created_at, updated_at, user_id, agent_id, run_id, ...}]}) and the platform
API (its openapi.json: /v1 and /v2 memories return a bare list, /v3 a {count, next,
previous, results} page; items add categories) return, read from mem0ai/mem0. The
{"memories": [...]} wrapper is one of the shapes mem0's own CLI normalises
(cli/CLI_SPECIFICATION.md, "Response Normalization"), and its dashboard's export sample
and `mem0 import` file format name the text `content` or `text` instead of `memory`: we
accept those as stand-ins for `memory`.

Refused or skipped
------------------
Refused (ForeignFormatError, whose message names the field and where, e.g.
'conversations[3].mapping: not an object'): not JSON or not UTF-8; a top level of the wrong
type (conversations: a list, or one conversation object as browser exporters save it;
Mem0: a list, or an object with results or memories); a conversation or message that is not an object; a conversation without an id; a
mapping that is not an object; current_node missing or not in the mapping; a parent that
is not in the mapping; a cycle in the parents; a role we do not know (ChatGPT: user,
assistant, system, tool, and the legacy function → tool; Claude, in any case: human/user,
assistant, system); content, parts, chat_messages, attachments or categories of the wrong type; a
Mem0 item without a `memory` string; a timestamp that is neither epoch seconds nor ISO 8601.
One structural error refuses the whole file: the first one found is reported.

Skipped, silently: nodes without a message (ChatGPT's root placeholder); messages marked
`metadata.is_visually_hidden_from_conversation` (custom instructions, memory context);
ChatGPT's hidden reasoning (`thoughts`, `reasoning_recap`) and Claude's `thinking`,
`tool_use` and `tool_result` blocks; messages whose text is empty or blank after that
(which covers the empty system messages); Mem0 items whose memory is a blank string;
branches of a ChatGPT conversation not on the path to current_node (edits, regenerations).
A conversation whose messages were all skipped still comes out, with no messages.

Content
-------
ChatGPT `text` and `multimodal_text` parts are joined with newlines: strings as they are,
dict parts that carry text (voice transcriptions) by their text, images as "[image]",
audio as "[audio]", video as "[video]", any other object as "[attachment]". `code` (what
the assistant sent to a tool) becomes a fenced block in its language; `tether_quote` the
quoted text and its source; `execution_output`, `system_error` and other types their
`text` or `result`. Claude messages are their `text` content blocks joined by blank lines,
else the message's `text`, followed by a "[file: name]" line per attachment or file (the
files' own contents, e.g. attachments' extracted_content, are not imported). A Mem0 item
keeps its own metadata; where it came from in Mem0 (agent_id, app_id, run_id, session_id,
actor_id, role, updated_at, expiration_date, when present) is added under metadata["mem0"]
unless the item's metadata already has that key; its categories become tags.

Timestamps (epoch seconds, or ISO 8601 with Z or an offset) become aware UTC datetimes;
an ISO timestamp without an offset is read as UTC.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

__all__ = [
    "ForeignFormatError",
    "ImportedMemory",
    "ImportedMessage",
    "ImportedSession",
    "parse_chatgpt",
    "parse_claude",
    "parse_mem0",
]


@dataclass(frozen=True)
class ImportedMessage:
    role: str  # "user" | "assistant" | "system" | "tool"
    content: str  # text; non-text parts summarised as "[image]", "[file: name]"... (module docstring)
    created_at: datetime | None  # timezone-aware UTC


@dataclass(frozen=True)
class ImportedSession:
    external_id: str  # the source's conversation id: stable, so a re-import can be idempotent
    title: str | None
    created_at: datetime | None
    messages: list[ImportedMessage]  # in conversation order
    metadata: dict[str, Any]  # {"source": "chatgpt" | "claude", "title": ..., "model": ...}, only what is known


@dataclass(frozen=True)
class ImportedMemory:
    external_id: str | None
    content: str
    user_id: str | None
    metadata: dict[str, Any]  # the item's own metadata, plus {"mem0": {agent_id, run_id, ...}} when present
    created_at: datetime | None
    tags: list[str]  # Mem0 categories, if present


class ForeignFormatError(ValueError):
    """Malformed input; the message names what is wrong and where (e.g. 'conversations[3].mapping: not an object')."""


# --- ChatGPT -------------------------------------------------------------------------

_CHATGPT_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool", "function": "tool"}
# The model's private reasoning: collapsed in ChatGPT's UI, not part of what was said.
_CHATGPT_REASONING_TYPES = {"thoughts", "reasoning_recap"}


def parse_chatgpt(stream: IO[bytes]) -> Iterator[ImportedSession]:
    """ChatGPT's `conversations.json` (or one conversation object), each conversation as the
    user last saw it: the branch from the root to current_node."""
    document = _load_json(stream)
    conversations = _top_level_list(document, plural="conversations", single_marker="mapping")
    return iter([_chatgpt_session(conversation, where=where) for where, conversation in conversations])


def _chatgpt_session(raw: Any, *, where: str) -> ImportedSession:
    conversation = _object(raw, where=where)
    external_id = _identifier(conversation, keys=("id", "conversation_id"), where=where)
    title = _optional_text(conversation.get("title"), where=f"{where}.title")
    created_at = _timestamp(conversation.get("create_time"), where=f"{where}.create_time")
    mapping = conversation.get("mapping")
    if mapping is None:
        raise ForeignFormatError(f"{where}.mapping: missing")
    if not isinstance(mapping, dict):
        raise ForeignFormatError(f"{where}.mapping: not an object")

    messages: list[ImportedMessage] = []
    last_model: str | None = None
    for node_where, node in _chatgpt_active_branch(mapping, conversation.get("current_node"), where=where):
        if node.get("message") is None:
            continue
        message = _object(node["message"], where=f"{node_where}.message")
        imported = _chatgpt_message(message, where=f"{node_where}.message")
        if imported is None:
            continue
        messages.append(imported)
        model_slug = message["metadata"].get("model_slug") if isinstance(message.get("metadata"), dict) else None
        if imported.role == "assistant" and isinstance(model_slug, str) and model_slug:
            last_model = model_slug

    default_model = conversation.get("default_model_slug")
    model = default_model if isinstance(default_model, str) and default_model else last_model
    return ImportedSession(
        external_id=external_id,
        title=title,
        created_at=created_at,
        messages=messages,
        metadata=_known({"source": "chatgpt", "title": title, "model": model}),
    )


def _chatgpt_active_branch(mapping: dict[str, Any], current_node: Any, *, where: str) -> list[tuple[str, dict[str, Any]]]:
    """The nodes from the root down to current_node, each with the path naming it in errors."""
    if current_node is None:
        raise ForeignFormatError(f"{where}.current_node: missing")
    if not isinstance(current_node, str):
        raise ForeignFormatError(f"{where}.current_node: not a string")
    if current_node not in mapping:
        raise ForeignFormatError(f"{where}.current_node: {current_node!r} is not in mapping")

    branch: list[tuple[str, dict[str, Any]]] = []
    # Every node is visited at most once, so even a hostile file ends after len(mapping) steps.
    seen: set[str] = set()
    node_id: str | None = current_node
    while node_id is not None:
        node_where = f"{where}.mapping[{json.dumps(node_id)}]"
        if node_id in seen:
            raise ForeignFormatError(f"{where}.mapping: cycle in parents at {node_id!r}")
        seen.add(node_id)
        node = _object(mapping[node_id], where=node_where)
        branch.append((node_where, node))
        parent = node.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise ForeignFormatError(f"{node_where}.parent: not a string")
        if parent is not None and parent not in mapping:
            raise ForeignFormatError(f"{node_where}.parent: {parent!r} is not in mapping")
        node_id = parent
    branch.reverse()
    return branch


def _chatgpt_message(message: dict[str, Any], *, where: str) -> ImportedMessage | None:
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return None
    author = _object(message.get("author"), where=f"{where}.author")
    role = _role(author.get("role"), known=_CHATGPT_ROLES, where=f"{where}.author.role")
    content = _object(message.get("content"), where=f"{where}.content")
    text = _chatgpt_text(content, where=f"{where}.content")
    if not text.strip():
        return None
    created_at = _timestamp(message.get("create_time"), where=f"{where}.create_time")
    return ImportedMessage(role=role, content=text, created_at=created_at)


def _chatgpt_text(content: dict[str, Any], *, where: str) -> str:
    content_type = content.get("content_type") if isinstance(content.get("content_type"), str) else ""
    if content_type in _CHATGPT_REASONING_TYPES:
        return ""
    if content_type == "code":
        code = content.get("text")
        if not isinstance(code, str) or not code.strip():
            return ""
        language = content.get("language")
        fence_language = language if isinstance(language, str) and language != "unknown" else ""
        return f"```{fence_language}\n{code}\n```"
    if content_type == "tether_quote":
        return _tether_quote(content)
    parts = content.get("parts")
    if parts is not None:
        if not isinstance(parts, list):
            raise ForeignFormatError(f"{where}.parts: not a list")
        return "\n".join(text for text in map(_chatgpt_part, parts) if text)
    # execution_output, system_error, tether_browsing_display and types yet to come keep
    # their words in `text` or `result`.
    for key in ("text", "result"):
        if isinstance(content.get(key), str):
            return content[key]
    return ""


def _chatgpt_part(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    if isinstance(part.get("text"), str):  # audio_transcription and the like
        return part["text"]
    part_type = part.get("content_type")
    part_type = part_type if isinstance(part_type, str) else ""
    for medium in ("image", "audio", "video"):
        if medium in part_type:
            return f"[{medium}]"
    return "[attachment]"


def _tether_quote(content: dict[str, Any]) -> str:
    quoted = content.get("text")
    if not isinstance(quoted, str) or not quoted.strip():
        return ""
    source = " ".join(
        value for value in (content.get("title") or content.get("domain"), content.get("url")) if isinstance(value, str) and value
    )
    return f"{quoted}\n\n— {source}" if source else quoted


# --- Claude --------------------------------------------------------------------------

_CLAUDE_ROLES = {"human": "user", "user": "user", "assistant": "assistant", "system": "system"}


def parse_claude(stream: IO[bytes]) -> Iterator[ImportedSession]:
    """Claude's `conversations.json` (or one conversation object), messages in order."""
    document = _load_json(stream)
    conversations = _top_level_list(document, plural="conversations", single_marker="chat_messages")
    return iter([_claude_session(conversation, where=where) for where, conversation in conversations])


def _claude_session(raw: Any, *, where: str) -> ImportedSession:
    conversation = _object(raw, where=where)
    external_id = _identifier(conversation, keys=("uuid", "id"), where=where)
    title = _optional_text(conversation.get("name"), where=f"{where}.name")
    created_at = _timestamp(conversation.get("created_at"), where=f"{where}.created_at")
    chat_messages = conversation.get("chat_messages")
    if chat_messages is None:
        raise ForeignFormatError(f"{where}.chat_messages: missing")
    if not isinstance(chat_messages, list):
        raise ForeignFormatError(f"{where}.chat_messages: not a list")

    located = [(f"{where}.chat_messages[{index}]", item) for index, item in enumerate(chat_messages)]
    located = [(message_where, _object(item, where=message_where)) for message_where, item in located]
    located = _claude_active_branch(located, conversation.get("current_leaf_message_uuid"), where=where)
    imported = (_claude_message(message, where=message_where) for message_where, message in located)
    messages = [message for message in imported if message is not None]

    model = conversation.get("model")
    return ImportedSession(
        external_id=external_id,
        title=title,
        created_at=created_at,
        messages=messages,
        metadata=_known({"source": "claude", "title": title, "model": model if isinstance(model, str) and model else None}),
    )


def _claude_active_branch(
    located: list[tuple[str, dict[str, Any]]], leaf_uuid: Any, *, where: str
) -> list[tuple[str, dict[str, Any]]]:
    """Only the branch ending at current_leaf_message_uuid when the file says which it is
    (claude.ai's API shape); the data export lists one line of messages, kept as it is."""
    by_uuid = {message["uuid"]: (where_, message) for where_, message in located if isinstance(message.get("uuid"), str)}
    if not isinstance(leaf_uuid, str) or leaf_uuid not in by_uuid:
        return located
    if not any(isinstance(message.get("parent_message_uuid"), str) for _, message in located):
        return located
    branch: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    message_uuid: Any = leaf_uuid
    # claude.ai's first message points at a root uuid that is no message: the walk ends there.
    while isinstance(message_uuid, str) and message_uuid in by_uuid:
        if message_uuid in seen:
            raise ForeignFormatError(f"{where}.chat_messages: cycle in parent_message_uuid at {message_uuid!r}")
        seen.add(message_uuid)
        message_where, message = by_uuid[message_uuid]
        branch.append((message_where, message))
        message_uuid = message.get("parent_message_uuid")
    branch.reverse()
    return branch


def _claude_message(message: dict[str, Any], *, where: str) -> ImportedMessage | None:
    sender = message.get("sender")
    role = _role(sender.lower() if isinstance(sender, str) else sender, known=_CLAUDE_ROLES, where=f"{where}.sender")
    text = _claude_block_text(message.get("content"), where=f"{where}.content")
    if not text.strip():
        plain = message.get("text")
        if plain is not None and not isinstance(plain, str):
            raise ForeignFormatError(f"{where}.text: not a string")
        text = plain or ""
    file_lines = [f"[file: {name}]" if name else "[file]" for name in _claude_file_names(message, where=where)]
    content = "\n".join(([text] if text.strip() else []) + file_lines)
    if not content.strip():
        return None
    created_at = _timestamp(message.get("created_at"), where=f"{where}.created_at")
    return ImportedMessage(role=role, content=content, created_at=created_at)


def _claude_block_text(blocks: Any, *, where: str) -> str:
    if blocks is None:
        return ""
    if not isinstance(blocks, list):
        raise ForeignFormatError(f"{where}: not a list")
    texts = [block.get("text") for block in blocks if isinstance(block, dict) and block.get("type") == "text"]
    return "\n\n".join(text for text in texts if isinstance(text, str) and text.strip())


def _claude_file_names(message: dict[str, Any], *, where: str) -> list[str]:
    """Names of the message's attachments then files, each once ("" when a file has none)."""
    names: list[str] = []
    for key in ("attachments", "files"):
        entries = message.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise ForeignFormatError(f"{where}.{key}: not a list")
        for entry in entries:
            name = entry.get("file_name") if isinstance(entry, dict) else None
            name = name.strip() if isinstance(name, str) else ""
            # The same upload can be listed as an attachment (its text) and as a file.
            if not name or name not in names:
                names.append(name)
    return names


# --- Mem0 ----------------------------------------------------------------------------

# Where a memory came from in Mem0 (scoping, lifetime): kept under metadata["mem0"].
_MEM0_PROVENANCE = ("agent_id", "app_id", "run_id", "session_id", "actor_id", "role", "updated_at", "expiration_date")


def parse_mem0(stream: IO[bytes]) -> Iterator[ImportedMemory]:
    """Mem0 memories: {"results": [...]}, {"memories": [...]} or a bare list of items."""
    document = _load_json(stream)
    if isinstance(document, list):
        container, items = "memories", document
    elif isinstance(document, dict) and ("results" in document or "memories" in document):
        container = "results" if "results" in document else "memories"
        items = document[container]
        if not isinstance(items, list):
            raise ForeignFormatError(f"{container}: not a list")
    else:
        expected = "a list of memories or an object with results or memories"
        raise ForeignFormatError(f"top level: expected {expected}, got {_json_type(document)}")
    memories = [_mem0_memory(item, where=f"{container}[{index}]") for index, item in enumerate(items)]
    return iter([memory for memory in memories if memory is not None])


def _mem0_memory(raw: Any, *, where: str) -> ImportedMemory | None:
    item = _object(raw, where=where)
    text_key = next((key for key in ("memory", "content", "text") if item.get(key) is not None), None)
    if text_key is None:
        raise ForeignFormatError(f"{where}.memory: missing")
    content = item[text_key]
    if not isinstance(content, str):
        raise ForeignFormatError(f"{where}.{text_key}: not a string")
    if not content.strip():
        return None

    metadata = item.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        raise ForeignFormatError(f"{where}.metadata: not an object")
    metadata = dict(metadata)
    provenance = {key: item[key] for key in _MEM0_PROVENANCE if item.get(key) is not None}
    if provenance:
        metadata.setdefault("mem0", provenance)  # the item's own "mem0" key, if any, wins

    external_id = item.get("id")
    return ImportedMemory(
        external_id=None if external_id is None else _scalar_id(external_id, where=f"{where}.id"),
        content=content,
        user_id=_optional_text(item.get("user_id"), where=f"{where}.user_id"),
        metadata=metadata,
        created_at=_timestamp(item.get("created_at"), where=f"{where}.created_at"),
        tags=_categories(item.get("categories"), where=f"{where}.categories"),
    )


def _categories(value: Any, *, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ForeignFormatError(f"{where}: not a list")
    tags: list[str] = []
    for index, category in enumerate(value):
        if not isinstance(category, str):
            raise ForeignFormatError(f"{where}[{index}]: not a string")
        if category.strip() and category.strip() not in tags:
            tags.append(category.strip())
    return tags


# --- Shared --------------------------------------------------------------------------


def _load_json(stream: IO[bytes]) -> Any:
    raw = stream.read()
    try:
        # json.loads on bytes detects UTF-8 (with or without a BOM), UTF-16 and UTF-32.
        return json.loads(raw)
    except UnicodeDecodeError as error:
        raise ForeignFormatError(f"file: not UTF-8 text ({error.reason} at byte {error.start})") from error
    except json.JSONDecodeError as error:
        raise ForeignFormatError(f"file: not JSON ({error.msg} at line {error.lineno} column {error.colno})") from error
    except RecursionError:
        raise ForeignFormatError("file: nested too deeply to be an export") from None


def _top_level_list(document: Any, *, plural: str, single_marker: str) -> list[tuple[str, Any]]:
    """The conversations with the path naming each; one conversation object (what browser
    exporters save) counts as a list of one."""
    if isinstance(document, list):
        return [(f"{plural}[{index}]", item) for index, item in enumerate(document)]
    if isinstance(document, dict) and single_marker in document:
        return [("conversation", document)]
    raise ForeignFormatError(f"top level: expected a list of {plural}, got {_json_type(document)}")


def _object(value: Any, *, where: str) -> dict[str, Any]:
    if value is None:
        raise ForeignFormatError(f"{where}: missing")
    if not isinstance(value, dict):
        raise ForeignFormatError(f"{where}: not an object")
    return value


def _identifier(container: dict[str, Any], *, keys: tuple[str, ...], where: str) -> str:
    for key in keys:
        if container.get(key) not in (None, ""):
            return _scalar_id(container[key], where=f"{where}.{key}")
    raise ForeignFormatError(f"{where}.{keys[0]}: missing")


def _scalar_id(value: Any, *, where: str) -> str:
    # bool is an int to Python, but True is nobody's id.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        if value.strip():
            return value.strip()
        raise ForeignFormatError(f"{where}: blank")
    raise ForeignFormatError(f"{where}: not a string")


def _optional_text(value: Any, *, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ForeignFormatError(f"{where}: not a string")
    return value.strip() or None


def _role(value: Any, *, known: dict[str, str], where: str) -> str:
    if value is None:
        raise ForeignFormatError(f"{where}: missing")
    if not isinstance(value, str):
        raise ForeignFormatError(f"{where}: not a string")
    if value not in known:
        raise ForeignFormatError(f"{where}: unknown role {value!r} (known: {', '.join(sorted(known))})")
    return known[value]


def _timestamp(value: Any, *, where: str) -> datetime | None:
    """Epoch seconds or ISO 8601 → aware UTC; an ISO time without an offset is taken as UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # json.loads lets NaN and Infinity through; fromtimestamp would reject them less clearly.
        if not math.isfinite(value):
            raise ForeignFormatError(f"{where}: not a timestamp ({value!r})")
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError) as error:
            raise ForeignFormatError(f"{where}: not a timestamp ({value!r})") from error
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError as error:
            raise ForeignFormatError(f"{where}: not an ISO 8601 timestamp ({value!r})") from error
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    raise ForeignFormatError(f"{where}: not a timestamp ({_json_type(value)})")


def _known(metadata: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in metadata.items() if value is not None}


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null"
