"""Claude's memory tool over MemoryHub (`pip install "memoryhub-client[anthropic]"`):

    memory = MemoryHubMemoryTool(hub=hub, user_id="ann")  # instead of BetaLocalFilesystemMemoryTool()
    runner = client.beta.messages.tool_runner(model=..., max_tokens=..., messages=[...], tools=[memory])

The Anthropic SDK's `BetaAbstractMemoryTool` (`AsyncMemoryHubMemoryTool`: its
`BetaAsyncAbstractMemoryTool`) with the local filesystem tool's commands, answers and errors,
where each file under `/memories` is one memory of the agent about `user_id`: the file's text
is the memory's content and its path `metadata.path` (tagged `memory-tool`, `agent` scope, type
`note`). Directories are what the paths imply. Every edit and every rename is a revision of
the same memory, which operators see and revert on the console; a memory an operator
quarantines is gone from the agent's directory until released.
"""

from __future__ import annotations

import functools
import posixpath
from dataclasses import dataclass
from typing import Any, Callable, Optional

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from memoryhub_client.aio import AsyncMemoryHub
from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import BadRequest, Conflict, NotFound, PayloadTooLarge
from memoryhub_client.integrations._hub import AnyHub, call, run_here
from memoryhub_client.models import Memory

ROOT = "/memories"
TAG = "memory-tool"
# Longer paths are refused before they reach the hub, where a path travels in a list's query
# string (`metadata.path=`); Linux's own limits are 255 bytes a name and 4,096 a path.
MAX_PATH_CHARS = 1024
# The hub keeps no blank content, so a blank file is stored as this text, with its exact
# whitespace in `metadata.blank`.
BLANK_CONTENT = "(empty file)"
PAGE = 200
# As the SDK's local filesystem tool numbers lines.
MAX_LINES = 999999
LINE_NUMBER_WIDTH = len(str(MAX_LINES))



def canonical(path: str) -> str:
    """The one spelling of `path` the hub keeps (`/memories/a/../b` is `/memories/b`), or a
    ToolError with the local tool's words for a path outside /memories."""
    if "\x00" in path:
        raise ToolError(f"Path {path!r} contains a NUL character")
    if len(path) > MAX_PATH_CHARS:
        raise ToolError(f"Path is {len(path)} characters long; the most is {MAX_PATH_CHARS}")
    if not path.startswith(ROOT):
        raise ToolError(f"Path must start with /memories, got: {path}")
    normal = posixpath.normpath(path)
    # The local tool would take `/memoriesX` as `/memories/X`; here only /memories and what is
    # below it is the directory.
    if normal != ROOT and not normal.startswith(ROOT + "/"):
        raise ToolError(f"Path {path} would escape /memories directory")
    return normal


def text_of(memory: Memory) -> str:
    """A file's text: its memory's content, or the whitespace of a blank file (unless an
    operator has since written text over the stand-in)."""
    blank = memory.metadata.get("blank")
    return blank if isinstance(blank, str) and memory.content == BLANK_CONTENT else memory.content


def stored(text: str, path: str) -> tuple[str, dict[str, Any]]:
    """The content and metadata that keep a file's text at `path`."""
    if text.strip():
        return text, {"path": path}
    return BLANK_CONTENT, {"path": path, "blank": text}


def size_of(memory: Memory) -> int:
    return len(text_of(memory).encode("utf-8"))


def format_size(bytes_size: int) -> str:
    """As the local tool shows a size: 0B, 512B, 1.5K, 2M."""
    if bytes_size == 0:
        return "0B"
    sizes = ["B", "K", "M", "G"]
    i = min((bytes_size.bit_length() - 1) // 10, len(sizes) - 1)
    size = bytes_size / (1024**i)
    return f"{int(size)}{sizes[i]}" if size == int(size) else f"{size:.1f}{sizes[i]}"


def listing(shown: str, directory: str, sizes: dict[str, int]) -> str:
    """The local tool's listing of `directory` (`shown` as Claude wrote it), two levels deep,
    names starting with a dot left out. A directory's size is that of the files under it: a
    directory here has no size of its own."""
    prefix = directory + "/"
    below = {path[len(prefix):]: size for path, size in sizes.items() if path.startswith(prefix)}
    entries: dict[str, int] = {}
    for relative, size in below.items():
        parts = relative.split("/")
        for depth in range(1, min(len(parts), 2) + 1):
            if parts[depth - 1].startswith("."):
                break
            name = "/".join(parts[:depth]) + ("/" if depth < len(parts) else "")
            entries[name] = entries.get(name, 0) + size
    # Name by name down the tree, each directory followed by what is in it: the local tool's order.
    ordered = sorted(entries, key=lambda name: name.rstrip("/").split("/"))
    lines = [f"{format_size(sum(below.values()))}\t{directory}"]
    lines.extend(f"{format_size(entries[name])}\t{prefix}{name}" for name in ordered)
    header = f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:"
    return f"{header}\n" + "\n".join(lines)


def numbered(shown: str, text: str, view_range: Optional[list[int]]) -> str:
    """A file as the local tool shows it: each line with its number, `view_range` [first, last]
    (last -1: to the end) as it reads one."""
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        raise ToolError(f"File {shown} exceeds maximum line limit of 999,999 lines.")
    start = 0
    if view_range and len(view_range) == 2:
        start = max(1, view_range[0]) - 1
        end = len(lines) if view_range[1] == -1 else view_range[1]
        lines = lines[start:end]
    rows = [f"{str(number).rjust(LINE_NUMBER_WIDTH)}\t{line}" for number, line in enumerate(lines, start + 1)]
    return f"Here's the content of {shown} with line numbers:\n" + "\n".join(rows)


def replaced(shown: str, text: str, old: str, new: str) -> tuple[str, str]:
    """`text` with its one `old` made `new`, and the local tool's answer; its errors otherwise."""
    count = text.count(old)
    if count == 0:
        raise ToolError(f"No replacement was performed, old_str `{old}` did not appear verbatim in {shown}.")
    if count > 1:
        found: list[int] = []
        start = 0
        while (position := text.find(old, start)) != -1:
            found.append(text[:position].count("\n") + 1)
            start = position + 1
        raise ToolError(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: {', '.join(map(str, found))}. Please ensure it is unique"
        )
    changed_line = text[:text.find(old)].count("\n")
    result = text.replace(old, new)
    lines = result.split("\n")
    snippet = [
        f"{str(number).rjust(LINE_NUMBER_WIDTH)}\t{lines[number - 1]}"
        for number in range(max(0, changed_line - 2) + 1, min(len(lines), changed_line + 3) + 1)
    ]
    return result, "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" + "\n".join(snippet)


def inserted(text: str, line: int, new: str) -> str:
    """`text` with `new` as its line `line` + 1, as the local tool inserts (ending in a newline)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if line < 0 or line > len(lines):
        raise ToolError(f"Invalid `insert_line` parameter: {line}. It should be within the range [0, {len(lines)}].")
    lines.insert(line, new.rstrip("\n"))
    result = "\n".join(lines)
    return result if result.endswith("\n") else result + "\n"


def missing(shown: str) -> ToolError:
    return ToolError(f"The path {shown} does not exist. Please provide a valid path.")


@dataclass
class Tree:
    """The directory's memories at one moment, newest first. Should two share a path (the hub
    does not prevent it), the newest is the file Claude reads, and a delete or a rename takes
    them all, so that none comes back from under it."""

    memories: list[Memory]

    @functools.cached_property
    def files(self) -> dict[str, Memory]:
        files: dict[str, Memory] = {}
        for memory in self.memories:
            files.setdefault(memory.metadata["path"], memory)
        return files

    def is_dir(self, path: str) -> bool:
        return path == ROOT or any(other.startswith(path + "/") for other in self.files)

    def at(self, path: str) -> list[Memory]:
        return [memory for memory in self.memories if memory.metadata["path"] == path]

    def under(self, directory: str) -> list[Memory]:
        return [memory for memory in self.memories if memory.metadata["path"].startswith(directory + "/")]

    def file_above(self, path: str) -> Optional[str]:
        """A file where `path` needs a directory (`/memories/a.md` for `/memories/a.md/b`)."""
        parent = posixpath.dirname(path)
        while parent != ROOT:
            if parent in self.files:
                return parent
            parent = posixpath.dirname(parent)
        return None


class MemoryDirectory:
    """One user's /memories on the hub: the commands of both tools, written once (the sync
    tool runs them with `run_here`)."""

    def __init__(self, hub: AnyHub, *, user_id: str, store: Optional[str]) -> None:
        self.hub = hub
        self.user_id = user_id
        self.store = store

    async def view(self, shown: str, view_range: Optional[list[int]]) -> str:
        path = canonical(shown)
        if path != ROOT and (memory := await self._file(path)) is not None:
            return numbered(shown, text_of(memory), view_range)
        tree = await self._tree()
        if not tree.is_dir(path):
            raise missing(shown)
        return listing(shown, path, {file: size_of(memory) for file, memory in tree.files.items()})

    async def create(self, shown: str, text: str) -> str:
        path = canonical(shown)
        # The whole directory, not the path alone: a directory there, or a file above, is a conflict too.
        tree = await self._tree()
        if path in tree.files or tree.is_dir(path):
            raise ToolError(f"File {shown} already exists")
        if (above := tree.file_above(path)) is not None:
            raise ToolError(f"The path {above} is not a directory.")
        content, metadata = stored(text, path)
        await self._writing(shown, self.hub.memories.create, content, user_id=self.user_id, scope="agent", store=self.store,
                            memory_type="note", tags=[TAG], metadata=metadata)
        return f"File created successfully at: {shown}"

    async def str_replace(self, shown: str, old: str, new: str) -> str:
        memory = await self._existing_file(shown)
        text, answer = replaced(shown, text_of(memory), old, new)
        await self._update(shown, memory, text=text)
        return answer

    async def insert(self, shown: str, line: int, new: str) -> str:
        memory = await self._existing_file(shown)
        await self._update(shown, memory, text=inserted(text_of(memory), line, new))
        return f"The file {shown} has been edited."

    async def delete(self, shown: str) -> str:
        path = canonical(shown)
        if path == ROOT:
            raise ToolError("Cannot delete the /memories directory itself")
        doomed = await self._at(path) or (await self._tree()).under(path)
        if not doomed:
            raise ToolError(f"The path {shown} does not exist")
        for memory in doomed:
            await self._delete(shown, memory)
        return f"Successfully deleted {shown}"

    async def rename(self, old_shown: str, new_shown: str) -> str:
        old, new = canonical(old_shown), canonical(new_shown)
        if old == ROOT:
            raise ToolError("Cannot rename the /memories directory itself")
        tree = await self._tree()
        if new in tree.files or tree.is_dir(new):
            raise ToolError(f"The destination {new_shown} already exists")
        if (above := tree.file_above(new)) is not None:
            raise ToolError(f"The path {above} is not a directory.")
        if old in tree.files:
            moves = [(memory, new) for memory in tree.at(old)]
        else:
            moves = [(memory, new + memory.metadata["path"][len(old):]) for memory in tree.under(old)]
            if moves and new.startswith(old + "/"):
                raise ToolError(f"Cannot move the directory {old_shown} into itself ({new_shown})")
        if not moves:
            raise ToolError(f"The path {old_shown} does not exist")
        # The same memory at its new path: a revision, so its history and review stay with it.
        for memory, to in moves:
            await self._update(old_shown, memory, metadata={**memory.metadata, "path": to})
        return f"Successfully renamed {old_shown} to {new_shown}"

    async def clear(self) -> str:
        for memory in (await self._tree()).memories:
            await self._delete(ROOT, memory)
        return "All memory cleared"

    def _filters(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "scope": "agent", "tags": [TAG], "store": self.store}

    async def _at(self, path: str, limit: int = PAGE) -> list[Memory]:
        """The memories at `path`, newest first, looked up by the path alone."""
        return (await call(self.hub.memories.list, **self._filters(), metadata={"path": path}, limit=limit)).results

    async def _file(self, path: str) -> Optional[Memory]:
        found = await self._at(path, limit=1)
        return found[0] if found else None

    async def _existing_file(self, shown: str) -> Memory:
        path = canonical(shown)
        if path != ROOT and (memory := await self._file(path)) is not None:
            return memory
        if path == ROOT or (await self._tree()).is_dir(path):
            raise ToolError(f"The path {shown} is not a file.")
        raise missing(shown)

    async def _tree(self) -> Tree:
        memories: list[Memory] = []
        cursor = None
        while True:
            # Newest first, as `_at` finds them, so both take the same memory for a path.
            page = await call(self.hub.memories.list, **self._filters(), limit=PAGE, cursor=cursor)
            # An operator may have edited a path into something the tool would never write.
            memories.extend(m for m in page.results if isinstance(path := m.metadata.get("path"), str) and path.startswith(ROOT + "/"))
            cursor = page.next
            if cursor is None:
                return Tree(memories)

    async def _update(self, shown: str, memory: Memory, *, text: Optional[str] = None, metadata: Optional[dict[str, Any]] = None) -> None:
        """The next revision of `memory`, refused if it changed since it was read."""
        changes: dict[str, Any] = {"metadata": metadata}
        if text is not None:
            kept_metadata = {key: value for key, value in memory.metadata.items() if key != "blank"}
            content, blank = stored(text, memory.metadata["path"])
            changes = {"content": content, "metadata": {**kept_metadata, **blank}}
        await self._writing(shown, self.hub.memories.update, memory.id, **changes, version=memory.version)

    async def _delete(self, shown: str, memory: Memory) -> None:
        await self._writing(shown, self.hub.memories.delete, memory.id)

    async def _writing(self, shown: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A write, with what the hub refuses said to Claude as a tool error it can act on."""
        try:
            return await call(method, *args, **kwargs)
        except NotFound as error:
            raise ToolError(f"The file {shown} no longer exists (may have been deleted or renamed concurrently).") from error
        except Conflict as error:
            raise ToolError(f"The file {shown} was changed concurrently; view it and try again.") from error
        except (BadRequest, PayloadTooLarge) as error:
            raise ToolError(f"MemoryHub refused to write {shown}: {error.message}") from error


class MemoryHubMemoryTool(BetaAbstractMemoryTool):
    """Claude's memory tool for the SDK's sync tool runner. `hub` is a `MemoryHub` with an agent
    key; `store` names the agent's store when it has several."""

    def __init__(self, *, hub: MemoryHub, user_id: str, store: Optional[str] = None) -> None:
        if isinstance(hub, AsyncMemoryHub):
            raise TypeError("an AsyncMemoryHub goes with AsyncMemoryHubMemoryTool")
        super().__init__()
        self.directory = MemoryDirectory(hub, user_id=user_id, store=store)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return run_here(self.directory.view(command.path, command.view_range))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return run_here(self.directory.create(command.path, command.file_text))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return run_here(self.directory.str_replace(command.path, command.old_str, command.new_str))

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return run_here(self.directory.insert(command.path, command.insert_line, command.insert_text))

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return run_here(self.directory.delete(command.path))

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return run_here(self.directory.rename(command.old_path, command.new_path))

    def clear_all_memory(self) -> str:
        """Deletes every file of this user's directory."""
        return run_here(self.directory.clear())


class AsyncMemoryHubMemoryTool(BetaAsyncAbstractMemoryTool):
    """Claude's memory tool for the SDK's async tool runner. `hub` is an `AsyncMemoryHub` (or a
    `MemoryHub`, whose calls then run on a thread) with an agent key."""

    def __init__(self, *, hub: AnyHub, user_id: str, store: Optional[str] = None) -> None:
        super().__init__()
        self.directory = MemoryDirectory(hub, user_id=user_id, store=store)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self.directory.view(command.path, command.view_range)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self.directory.create(command.path, command.file_text)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self.directory.str_replace(command.path, command.old_str, command.new_str)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self.directory.insert(command.path, command.insert_line, command.insert_text)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self.directory.delete(command.path)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self.directory.rename(command.old_path, command.new_path)

    async def clear_all_memory(self) -> str:
        """Deletes every file of this user's directory."""
        return await self.directory.clear()
