"""Foreign formats (issue 42): ChatGPT and Claude conversation exports and Mem0 memories,
read from small files in their published shapes into neutral records. No database."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from memoryhub.portability.foreign import (
    ForeignFormatError,
    ImportedMemory,
    ImportedMessage,
    ImportedSession,
    parse_chatgpt,
    parse_claude,
    parse_mem0,
)


def _file(document: Any) -> io.BytesIO:
    return io.BytesIO(json.dumps(document).encode())


def _node(node_id: str, parent: str | None, children: list[str], message: dict[str, Any] | None) -> dict[str, Any]:
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def _message(role: str, parts: list[Any], *, at: float | None = None, content_type: str = "text", **extra: Any) -> dict[str, Any]:
    return {
        "id": f"m-{role}-{at}",
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": at,
        "update_time": None,
        "content": {"content_type": content_type, "parts": parts},
        "status": "finished_successfully",
        "end_turn": None,
        "weight": 1.0,
        "metadata": extra.pop("metadata", {}),
        "recipient": "all",
        **extra,
    }


def _conversation(mapping: dict[str, Any], current_node: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": "conv-1",
        "conversation_id": "conv-1",
        "title": "Arithmetic",
        "create_time": 1700000000.5,
        "update_time": 1700000100.0,
        "mapping": mapping,
        "current_node": current_node,
        "is_archived": False,
        "moderation_results": [],
        "safe_urls": [],
        **extra,
    }


def _edited_conversation() -> dict[str, Any]:
    """root → hidden system prompt → "2+2?" → "4" → "and 3+3?" → "6", where the user then edited
    "and 3+3?" into "and 5+5?" and got "10": a branch at the assistant's "4"."""
    mapping = {
        # Listed out of conversation order: the order must come from the parents.
        "a-new": _node("a-new", "u-new", [], _message("assistant", ["10"], at=1700000060.0, metadata={"model_slug": "gpt-4o"})),
        "root": _node("root", None, ["sys"], None),
        "u-old": _node("u-old", "a1", ["a-old"], _message("user", ["and 3+3?"], at=1700000030.0)),
        "sys": _node("sys", "root", ["u1"], _message("system", ["You are ChatGPT, a large language model."],
                                                     metadata={"is_visually_hidden_from_conversation": True})),
        "a1": _node("a1", "u1", ["u-old", "u-new"], _message("assistant", ["4"], at=1700000020.0)),
        "u1": _node("u1", "sys", ["a1"], _message("user", ["What is 2+2?"], at=1700000010.0)),
        "a-old": _node("a-old", "u-old", [], _message("assistant", ["6"], at=1700000040.0)),
        "u-new": _node("u-new", "a1", ["a-new"], _message("user", ["and 5+5?"], at=1700000050.0)),
    }
    return _conversation(mapping, "a-new", default_model_slug="gpt-4o")


def _only(iterator: Any) -> Any:
    (record,) = list(iterator)
    return record


# --- ChatGPT -------------------------------------------------------------------------


def test_it_reads_a_chatgpt_conversation_along_the_branch_the_user_last_saw() -> None:
    session = _only(parse_chatgpt(_file([_edited_conversation()])))

    assert isinstance(session, ImportedSession)
    assert session.external_id == "conv-1"
    assert session.title == "Arithmetic"
    assert session.created_at == datetime(2023, 11, 14, 22, 13, 20, 500000, tzinfo=UTC)
    assert [(m.role, m.content) for m in session.messages] == [
        ("user", "What is 2+2?"),
        ("assistant", "4"),
        ("user", "and 5+5?"),
        ("assistant", "10"),
    ]
    assert session.messages[0].created_at == datetime(2023, 11, 14, 22, 13, 30, tzinfo=UTC)
    assert session.metadata == {"source": "chatgpt", "title": "Arithmetic", "model": "gpt-4o"}


def test_it_keeps_the_words_of_a_multimodal_message_and_marks_its_image() -> None:
    image = {
        "content_type": "image_asset_pointer",
        "asset_pointer": "sediment://file_00000000329c620cae9335c4e8fffff8",
        "size_bytes": 221373, "width": 708, "height": 1536, "metadata": {"sanitized": True},
    }
    mapping = {
        "root": _node("root", None, ["u1"], None),
        "u1": _node("u1", "root", ["a1"],
                    _message("user", [image, "What is in this picture?"], at=1.0, content_type="multimodal_text")),
        "a1": _node("a1", "u1", [], _message("assistant", ["A cat."], at=2.0, metadata={"model_slug": "gpt-4o"})),
    }
    session = _only(parse_chatgpt(_file([_conversation(mapping, "a1")])))

    assert session.messages[0] == ImportedMessage(
        role="user", content="[image]\nWhat is in this picture?", created_at=datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)
    )
    # No default_model_slug: the model that answered last names the conversation's.
    assert session.metadata["model"] == "gpt-4o"


def test_it_skips_hidden_empty_and_reasoning_messages_but_keeps_a_visible_system_message() -> None:
    custom_instructions = _message(
        "user", [""], content_type="user_editable_context",
        metadata={"is_visually_hidden_from_conversation": True,
                  "user_context_message_data": {"about_user_message": "I am a vet."}},
    )
    custom_instructions["content"] = {"content_type": "user_editable_context",
                                      "user_profile": "I am a vet.", "user_instructions": "Be brief."}
    thoughts = _message("assistant", [], content_type="thoughts")
    thoughts["content"] = {"content_type": "thoughts", "thoughts": [{"summary": "Adding", "content": "2 and 2 make 4"}],
                           "source_analysis_msg_id": "x"}
    mapping = {
        "root": _node("root", None, ["sys"], None),
        "sys": _node("sys", "root", ["ctx"], _message("system", [""])),
        "ctx": _node("ctx", "sys", ["note"], custom_instructions),
        "note": _node("note", "ctx", ["u1"], _message("system", ["You are talking to a vet."])),
        "u1": _node("u1", "note", ["think"], _message("user", ["What is 2+2?"], at=10.0)),
        "think": _node("think", "u1", ["blank"], thoughts),
        "blank": _node("blank", "think", ["a1"], _message("assistant", ["  \n"], at=11.0)),
        "a1": _node("a1", "blank", [], _message("assistant", ["4"], at=12.0)),
    }
    session = _only(parse_chatgpt(_file([_conversation(mapping, "a1")])))

    assert [(m.role, m.content) for m in session.messages] == [
        ("system", "You are talking to a vet."),
        ("user", "What is 2+2?"),
        ("assistant", "4"),
    ]


def test_it_keeps_a_conversation_whose_messages_were_all_skipped() -> None:
    mapping = {"root": _node("root", None, ["sys"], None), "sys": _node("sys", "root", [], _message("system", [""]))}
    session = _only(parse_chatgpt(_file([_conversation(mapping, "sys", title="")])))

    assert session.messages == []
    assert session.title is None
    assert session.metadata == {"source": "chatgpt"}


def test_it_turns_chatgpt_tool_traffic_into_readable_messages() -> None:
    code = _message("assistant", [], at=2.0, recipient="python")
    code["content"] = {"content_type": "code", "language": "python", "text": "print(2 + 2)"}
    output = _message("tool", [], at=3.0)
    output["author"]["name"] = "python"
    output["content"] = {"content_type": "execution_output", "text": "4"}
    quote = _message("tool", [], at=4.0)
    quote["author"]["name"] = "browser"
    quote["content"] = {"content_type": "tether_quote", "url": "https://example.org/sums", "domain": "example.org",
                        "title": "Sums", "text": "Two and two make four."}
    legacy = _message("function", ["{\"ok\": true}"], at=5.0)
    mapping = {
        "u1": _node("u1", None, ["code"], _message("user", ["Compute 2+2 in Python"], at=1.0)),
        "code": _node("code", "u1", ["out"], code),
        "out": _node("out", "code", ["quote"], output),
        "quote": _node("quote", "out", ["legacy"], quote),
        "legacy": _node("legacy", "quote", [], legacy),
    }
    session = _only(parse_chatgpt(_file([_conversation(mapping, "legacy")])))

    assert [(m.role, m.content) for m in session.messages] == [
        ("user", "Compute 2+2 in Python"),
        ("assistant", "```python\nprint(2 + 2)\n```"),
        ("tool", "4"),
        ("tool", "Two and two make four.\n\n— Sums https://example.org/sums"),
        ("tool", "{\"ok\": true}"),
    ]


def test_it_reads_one_chatgpt_conversation_saved_on_its_own() -> None:
    conversation = _edited_conversation()
    del conversation["id"]  # older files and the web API name it conversation_id only

    session = _only(parse_chatgpt(_file(conversation)))

    assert session.external_id == "conv-1"
    assert len(session.messages) == 4


def test_it_stops_at_a_cycle_in_parents_with_an_error() -> None:
    mapping = {
        "a": _node("a", "c", ["b"], _message("user", ["one"], at=1.0)),
        "b": _node("b", "a", ["c"], _message("assistant", ["two"], at=2.0)),
        "c": _node("c", "b", ["a"], _message("user", ["three"], at=3.0)),
    }
    with pytest.raises(ForeignFormatError, match=r"conversations\[0\]\.mapping: cycle in parents"):
        parse_chatgpt(_file([_conversation(mapping, "c")]))

    itself = {"a": _node("a", "a", [], _message("user", ["one"], at=1.0))}
    with pytest.raises(ForeignFormatError, match="cycle in parents at 'a'"):
        parse_chatgpt(_file([_conversation(itself, "a")]))


def test_it_refuses_the_whole_file_before_handing_out_any_conversation() -> None:
    broken = _edited_conversation() | {"id": "conv-2", "mapping": ["not", "an", "object"]}

    # Raised by the call itself, not halfway through iterating: nothing gets imported.
    with pytest.raises(ForeignFormatError, match=r"conversations\[1\]\.mapping: not an object"):
        parse_chatgpt(_file([_edited_conversation(), broken]))


# --- Claude --------------------------------------------------------------------------


def _claude_conversation(**extra: Any) -> dict[str, Any]:
    return {
        "uuid": "c-1",
        "name": "Trip to Lisbon",
        "created_at": "2024-03-15T10:00:00.000000Z",
        "updated_at": "2024-03-15T11:00:00.000000Z",
        "account": {"uuid": "acct-1"},
        "chat_messages": [
            {
                "uuid": "m-1", "sender": "human", "text": "Plan a day in Lisbon. Notes attached.",
                "content": [{"type": "text", "text": "Plan a day in Lisbon. Notes attached.", "citations": [],
                             "start_timestamp": "2024-03-15T10:00:01Z", "stop_timestamp": "2024-03-15T10:00:01Z"}],
                "created_at": "2024-03-15T12:00:00+02:00", "updated_at": "2024-03-15T10:00:00Z",
                "attachments": [{"file_name": "notes.txt", "file_type": "txt", "file_size": 120,
                                 "extracted_content": "Museums, trams."}],
                "files": [{"file_name": "notes.txt"}, {"file_name": "map.png", "file_uuid": "f-1"}],
            },
            {
                "uuid": "m-2", "sender": "assistant", "text": "stale copy of the answer",
                "content": [
                    {"type": "thinking", "thinking": "They like museums."},
                    {"type": "text", "text": "Morning: the tram 28."},
                    {"type": "tool_use", "name": "web_search", "input": {"query": "Lisbon museums"}},
                    {"type": "tool_result", "name": "web_search", "content": [{"type": "text", "text": "MAAT, Gulbenkian"}]},
                    {"type": "text", "text": "Afternoon: the Gulbenkian."},
                ],
                "created_at": "2024-03-15T10:00:30Z", "updated_at": "2024-03-15T10:00:30Z", "attachments": [], "files": [],
            },
            {
                "uuid": "m-3", "sender": "human", "text": "Thanks!", "created_at": "2024-03-15T10:01:00Z",
                "updated_at": "2024-03-15T10:01:00Z", "attachments": [], "files": [],
            },
            {
                "uuid": "m-4", "sender": "assistant", "text": "", "content": [{"type": "text", "text": ""}],
                "created_at": "2024-03-15T10:01:05Z", "attachments": [], "files": [],
            },
        ],
        **extra,
    }


def test_it_reads_a_claude_conversation_from_its_content_blocks_or_else_its_text() -> None:
    session = _only(parse_claude(_file([_claude_conversation()])))

    assert session.external_id == "c-1"
    assert session.title == "Trip to Lisbon"
    assert session.created_at == datetime(2024, 3, 15, 10, 0, tzinfo=UTC)
    assert session.metadata == {"source": "claude", "title": "Trip to Lisbon"}
    assert session.messages == [
        # An offset is turned into UTC; the attachment and the file come out once each, by name.
        ImportedMessage("user", "Plan a day in Lisbon. Notes attached.\n[file: notes.txt]\n[file: map.png]",
                        datetime(2024, 3, 15, 10, 0, tzinfo=UTC)),
        # Text blocks only: the thinking and the tool traffic are left out.
        ImportedMessage("assistant", "Morning: the tram 28.\n\nAfternoon: the Gulbenkian.",
                        datetime(2024, 3, 15, 10, 0, 30, tzinfo=UTC)),
        # No content blocks (older exports): the plain text. The empty answer after it is skipped.
        ImportedMessage("user", "Thanks!", datetime(2024, 3, 15, 10, 1, tzinfo=UTC)),
    ]


def test_it_leaves_an_unnamed_claude_conversation_without_a_title() -> None:
    session = _only(parse_claude(_file([_claude_conversation(name="", model="claude-3-5-sonnet-20241022")])))

    assert session.title is None
    assert session.metadata == {"source": "claude", "model": "claude-3-5-sonnet-20241022"}


def test_it_follows_claudes_current_leaf_when_messages_name_their_parents() -> None:
    root = "00000000-0000-4000-8000-000000000000"

    def message(uuid: str, parent: str, sender: str, text: str) -> dict[str, Any]:
        return {"uuid": uuid, "parent_message_uuid": parent, "sender": sender, "text": text,
                "content": [{"type": "text", "text": text}], "created_at": "2024-03-15T10:00:00Z"}

    conversation = {
        "uuid": "c-2", "name": "Edited", "created_at": "2024-03-15T10:00:00Z", "current_leaf_message_uuid": "a-new",
        "chat_messages": [
            message("u1", root, "human", "Name a colour."),
            message("a1", "u1", "assistant", "Blue."),
            message("u-old", "a1", "human", "Another?"),
            message("a-old", "u-old", "assistant", "Red."),
            message("u-new", "a1", "human", "A warmer one?"),
            message("a-new", "u-new", "assistant", "Orange."),
        ],
    }
    session = _only(parse_claude(_file(conversation)))

    assert [m.content for m in session.messages] == ["Name a colour.", "Blue.", "A warmer one?", "Orange."]


# --- Mem0 ----------------------------------------------------------------------------


def test_it_reads_mem0_get_all_results_with_user_metadata_and_categories() -> None:
    document = {
        "count": 2, "next": None, "previous": None,
        "results": [
            {
                "id": "f4cbdb08-7062-4f3e-8eb2-9f5c80dfe64c", "memory": "Is vegetarian", "hash": "3c1b",
                "user_id": "alex", "agent_id": "travel-bot", "metadata": {"source": "onboarding"},
                "categories": ["food", "health", "food"], "created_at": "2024-07-20T10:00:00.123456-07:00",
                "updated_at": "2024-07-21T10:00:00-07:00", "expiration_date": None, "structured_attributes": {"year": 2024},
            },
            {"id": "a2b8", "memory": "Plans a trip to San Francisco",
             "created_at": "2024-07-01T12:00:00Z", "updated_at": "2024-07-01T12:00:00Z"},
        ],
    }
    vegetarian, trip = parse_mem0(_file(document))

    assert vegetarian == ImportedMemory(
        external_id="f4cbdb08-7062-4f3e-8eb2-9f5c80dfe64c",
        content="Is vegetarian",
        user_id="alex",
        metadata={"source": "onboarding", "mem0": {"agent_id": "travel-bot", "updated_at": "2024-07-21T10:00:00-07:00"}},
        created_at=datetime(2024, 7, 20, 17, 0, 0, 123456, tzinfo=UTC),
        tags=["food", "health"],
    )
    assert trip == ImportedMemory(external_id="a2b8", content="Plans a trip to San Francisco", user_id=None,
                                  metadata={"mem0": {"updated_at": "2024-07-01T12:00:00Z"}},
                                  created_at=datetime(2024, 7, 1, 12, 0, tzinfo=UTC), tags=[])


def test_it_reads_a_bare_list_of_mem0_memories_and_the_memories_wrapper() -> None:
    bare = [{"id": "m1", "memory": "Prefers dark mode", "user_id": "alice", "metadata": None, "categories": None,
             "created_at": "2024-07-01T12:00:00", "updated_at": None},
            {"id": "m2", "memory": "   ", "user_id": "alice"}]
    wrapped = {"memories": [{"id": "mem_abc123", "content": "User prefers dark mode", "user_id": "user_1",
                             "created_at": "2026-04-10T12:00:00Z"}], "total": 1}

    (dark_mode,) = parse_mem0(_file(bare))  # the blank memory is skipped
    (exported,) = parse_mem0(_file(wrapped))

    # No offset: read as UTC.
    assert dark_mode == ImportedMemory("m1", "Prefers dark mode", "alice", {}, datetime(2024, 7, 1, 12, 0, tzinfo=UTC), [])
    assert (exported.external_id, exported.content, exported.user_id) == ("mem_abc123", "User prefers dark mode", "user_1")


# --- Tolerance and refusal -----------------------------------------------------------


def test_it_ignores_fields_it_does_not_know() -> None:
    chatgpt = _edited_conversation() | {"sugar_item_visible": True, "memory_scope": "user", "gizmo_id": None}
    chatgpt["mapping"]["u1"]["future_flag"] = {"nested": [1, 2]}
    chatgpt["mapping"]["u1"]["message"]["author"]["badge"] = "new"
    chatgpt["mapping"]["u1"]["message"]["content"]["language_hint"] = "en"
    claude = _claude_conversation(project={"uuid": "p-1", "name": "Travel"}, is_starred=True, settings={"paprika_mode": None})
    claude["chat_messages"][0]["truncated"] = False
    claude["chat_messages"][0]["content"].append({"type": "voice_note", "title": "hm"})
    mem0 = {"results": [{"id": "m1", "memory": "Likes tea", "score": 0.8, "lifecycle_state": "active", "synthesized": False}],
            "page_info": {"cursor": None}}

    assert [m.content for m in _only(parse_chatgpt(_file([chatgpt]))).messages] == ["What is 2+2?", "4", "and 5+5?", "10"]
    assert _only(parse_claude(_file([claude]))).messages[0].content.startswith("Plan a day in Lisbon.")
    assert _only(parse_mem0(_file(mem0))).content == "Likes tea"


def _chatgpt_with(**changes: Any) -> list[dict[str, Any]]:
    return [_edited_conversation(), _edited_conversation() | changes]


def _chatgpt_with_node(node_id: str, **changes: Any) -> list[dict[str, Any]]:
    conversation = _edited_conversation()
    conversation["mapping"][node_id] = conversation["mapping"][node_id] | changes
    return [conversation]


def _chatgpt_with_message(node_id: str, **changes: Any) -> list[dict[str, Any]]:
    conversation = _edited_conversation()
    conversation["mapping"][node_id]["message"] |= changes
    return [conversation]


def _claude_with_message(**changes: Any) -> list[dict[str, Any]]:
    conversation = _claude_conversation()
    conversation["chat_messages"][1] |= changes
    return [conversation]


def _without(document: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key not in keys}


NOT_ISO = "not an ISO 8601 timestamp"
MALFORMED = [
    # (what is wrong, parser, the file, the error's message as a regular expression)
    ("chatgpt-not-json", parse_chatgpt, b"<html>Not found</html>", r"^file: not JSON \(Expecting value at line 1 column 1\)$"),
    ("chatgpt-empty-file", parse_chatgpt, b"", r"^file: not JSON"),
    ("chatgpt-latin-1", parse_chatgpt, b'["caf\xe9"]', r"^file: not UTF-8 text \(invalid continuation byte at byte 5\)$"),
    ("chatgpt-top-level-object", parse_chatgpt, {"conversations": []},
     r"^top level: expected a list of conversations, got an object$"),
    ("chatgpt-top-level-string", parse_chatgpt, "conversations", r"^top level: expected a list of conversations, got a string$"),
    ("chatgpt-conversation-not-object", parse_chatgpt, [["not a conversation"]], r"^conversations\[0\]: not an object$"),
    ("chatgpt-no-id", parse_chatgpt, [_without(_edited_conversation(), "id", "conversation_id")],
     r"^conversations\[0\]\.id: missing$"),
    ("chatgpt-mapping-not-object", parse_chatgpt, _chatgpt_with(mapping="{}"), r"^conversations\[1\]\.mapping: not an object$"),
    ("chatgpt-no-mapping", parse_chatgpt, [_without(_edited_conversation(), "mapping")],
     r"^conversations\[0\]\.mapping: missing$"),
    ("chatgpt-current-node-unknown", parse_chatgpt, _chatgpt_with(current_node="gone"),
     r"^conversations\[1\]\.current_node: 'gone' is not in mapping$"),
    ("chatgpt-no-current-node", parse_chatgpt, _chatgpt_with(current_node=None), r"^conversations\[1\]\.current_node: missing$"),
    ("chatgpt-parent-unknown", parse_chatgpt, _chatgpt_with_node("u1", parent="gone"),
     r"^conversations\[0\]\.mapping\[\"u1\"\]\.parent: 'gone' is not in mapping$"),
    ("chatgpt-message-not-object", parse_chatgpt, _chatgpt_with_node("a1", message="4"),
     r"^conversations\[0\]\.mapping\[\"a1\"\]\.message: not an object$"),
    ("chatgpt-unknown-role", parse_chatgpt, _chatgpt_with_message("u1", author={"role": "critic"}),
     r"^conversations\[0\]\.mapping\[\"u1\"\]\.message\.author\.role: unknown role 'critic'"),
    ("chatgpt-role-not-text", parse_chatgpt, _chatgpt_with_message("u1", author={"role": ["user"]}),
     r"^conversations\[0\]\.mapping\[\"u1\"\]\.message\.author\.role: not a string$"),
    ("chatgpt-parts-not-list", parse_chatgpt, _chatgpt_with_message("u1", content={"content_type": "text", "parts": "hello"}),
     r"^conversations\[0\]\.mapping\[\"u1\"\]\.message\.content\.parts: not a list$"),
    ("chatgpt-bad-message-time", parse_chatgpt, _chatgpt_with_message("u1", create_time="yesterday"),
     rf"^conversations\[0\]\.mapping\[\"u1\"\]\.message\.create_time: {NOT_ISO} \('yesterday'\)$"),
    ("chatgpt-bad-conversation-time", parse_chatgpt, _chatgpt_with(create_time=[2024]),
     r"^conversations\[1\]\.create_time: not a timestamp \(a list\)$"),
    ("chatgpt-nan-time", parse_chatgpt, b'[{"id": "x", "create_time": NaN, "mapping": {}, "current_node": "x"}]',
     r"^conversations\[0\]\.create_time: not a timestamp \(nan\)$"),
    ("claude-not-json", parse_claude, b"{not json", r"^file: not JSON"),
    ("claude-top-level-object", parse_claude, {"uuid": "c-1"}, r"^top level: expected a list of conversations, got an object$"),
    ("claude-no-uuid", parse_claude, [_without(_claude_conversation(), "uuid")], r"^conversations\[0\]\.uuid: missing$"),
    ("claude-messages-not-list", parse_claude, [_claude_conversation(chat_messages={"m-1": {}})],
     r"^conversations\[0\]\.chat_messages: not a list$"),
    ("claude-bad-time", parse_claude, [_claude_conversation(created_at="15/03/2024")],
     rf"^conversations\[0\]\.created_at: {NOT_ISO} \('15/03/2024'\)$"),
    ("claude-unknown-sender", parse_claude, _claude_with_message(sender="moderator"),
     r"^conversations\[0\]\.chat_messages\[1\]\.sender: unknown role 'moderator'"),
    ("claude-content-not-list", parse_claude, _claude_with_message(content="Morning"),
     r"^conversations\[0\]\.chat_messages\[1\]\.content: not a list$"),
    ("claude-attachments-not-list", parse_claude, _claude_with_message(attachments={"file_name": "x"}),
     r"^conversations\[0\]\.chat_messages\[1\]\.attachments: not a list$"),
    ("mem0-not-json", parse_mem0, b"memories", r"^file: not JSON"),
    ("mem0-top-level-object", parse_mem0, {"count": 0},
     r"^top level: expected a list of memories or an object with results or memories, got an object$"),
    ("mem0-results-not-list", parse_mem0, {"results": {"m1": "Likes tea"}}, r"^results: not a list$"),
    ("mem0-no-memory", parse_mem0, {"results": [{"id": "m1", "memory": "ok"}, {"id": "m2", "hash": "x"}]},
     r"^results\[1\]\.memory: missing$"),
    ("mem0-memory-not-text", parse_mem0, [{"id": "m1", "memory": ["Likes", "tea"]}], r"^memories\[0\]\.memory: not a string$"),
    ("mem0-metadata-not-object", parse_mem0, [{"id": "m1", "memory": "x", "metadata": "vip"}],
     r"^memories\[0\]\.metadata: not an object$"),
    ("mem0-categories-not-list", parse_mem0, [{"id": "m1", "memory": "x", "categories": "food"}],
     r"^memories\[0\]\.categories: not a list$"),
    ("mem0-bad-time", parse_mem0, [{"id": "m1", "memory": "x", "created_at": "last week"}],
     rf"^memories\[0\]\.created_at: {NOT_ISO} \('last week'\)$"),
]


@pytest.mark.parametrize(("parse", "document", "message"), [pytest.param(*case[1:], id=case[0]) for case in MALFORMED])
def test_it_refuses_a_malformed_file_naming_what_is_wrong_and_where(parse: Any, document: Any, message: str) -> None:
    stream = io.BytesIO(document) if isinstance(document, bytes) else _file(document)

    with pytest.raises(ForeignFormatError, match=message):
        list(parse(stream))


def test_it_reads_a_file_that_starts_with_a_byte_order_mark() -> None:
    stream = io.BytesIO(b"\xef\xbb\xbf" + json.dumps([{"id": "m1", "memory": "Likes tea"}]).encode())

    assert _only(parse_mem0(stream)).content == "Likes tea"


def test_it_reports_a_refusal_as_a_value_error() -> None:
    # Callers that already turn ValueError into a 400 need nothing new for these files.
    with pytest.raises(ValueError):
        parse_mem0(io.BytesIO(b"42"))
