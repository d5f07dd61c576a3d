"""Imports: an upload checked at once (a malformed file or a bad checksum is refused before
anything is queued), kept in parts, loaded in the background (memoryhub.portability.loading).
docs/portability.md, "Imports"."""

from __future__ import annotations

import contextlib
import hashlib
import json
import queue
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from memoryhub.core import tasking
from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Conflict, NotFound
from memoryhub.core.models import Agent, Membership, Store, Workspace
from memoryhub.core.selectors import operator_actor
from memoryhub.portability import foreign
from memoryhub.portability.archive import FORMAT, PART_BYTES, VERSION, manifest_sealed_for
from memoryhub.portability.loading import ORDER, BackgroundCopy, Loader, chunked, record_parsed
from memoryhub.core.jobs import JobStatus, job_claim
from memoryhub.portability.models import Import, ImportFormat, ImportPart
from memoryhub.portability.services import progress_recorder
from memoryhub.usage import metering
from memoryhub.notifications.services import notification_queue, public_url

RUN_TASK = "memoryhub.portability.tasks.run_import"
PARSERS = {ImportFormat.CHATGPT: foreign.parse_chatgpt, ImportFormat.CLAUDE: foreign.parse_claude, ImportFormat.MEM0: foreign.parse_mem0}


class _Unprocessable(ApplicationError):
    status_code = 422


def _refused_file(message: str, code: str = "INVALID_IMPORT_FILE") -> ApplicationError:
    return _Unprocessable(message, code=code)


# -- what an upload must be -------------------------------------------------------------

def archive_manifest(archive: zipfile.ZipFile, *, verify: bool = True) -> dict[str, Any]:
    """The manifest of a MemoryHub archive, every file's checksum verified against it
    (unless it was when the file came in: `verify=False`)."""
    try:
        with archive.open("manifest.json") as member:
            raw = member.read(MAX_MANIFEST_BYTES + 1)  # read no more than a manifest can be, whatever the zip claims
        if len(raw) > MAX_MANIFEST_BYTES:
            raise _refused_file(f"manifest.json is longer than {MAX_MANIFEST_BYTES} bytes.")
        manifest = json.loads(raw)
    except KeyError:
        raise _refused_file("The archive has no manifest.json.") from None
    except ValueError as error:
        raise _refused_file(f"manifest.json is not JSON: {error}.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _refused_file(f"manifest.json: format is not {FORMAT!r}.")
    if manifest.get("version") != VERSION:
        raise _refused_file(f"manifest.json: version {manifest.get('version')!r} is not one this hub reads ({VERSION}).", "UNSUPPORTED_ARCHIVE_VERSION")
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise _refused_file("manifest.json: files is not an object of name: sha256.")
    present = set(archive.namelist())
    inflated = 0
    for name, expected in files.items():
        if name not in present:
            raise _refused_file(f"{name}: named in the manifest, missing from the archive.", "ARCHIVE_CHECKSUM_MISMATCH")
        if not verify:
            continue
        digest, lines = hashlib.sha256(), _LineLengths(name)
        with archive.open(name) as member:
            while block := member.read(PART_BYTES):
                # Counted as they are inflated, not as the zip claims: a small zip may inflate without end.
                inflated += len(block)
                if inflated > settings.MEMORYHUB_IMPORT_MAX_INFLATED_BYTES:
                    raise _refused_file(
                        f"The archive inflates to more than MEMORYHUB_IMPORT_MAX_INFLATED_BYTES ({settings.MEMORYHUB_IMPORT_MAX_INFLATED_BYTES} bytes)."
                    )
                lines.add(block)
                digest.update(block)
        if digest.hexdigest() != expected:
            raise _refused_file(f"{name}: its sha256 does not match the manifest's.", "ARCHIVE_CHECKSUM_MISMATCH")
    return manifest


MAX_MANIFEST_BYTES = 1024 * 1024


class _LineLengths:
    """Refuses a member at the first line longer than a request's body may be
    (MEMORYHUB_MAX_BODY_BYTES: a record is one line, and none the API accepts is longer),
    read block by block: such a line would be held whole in memory to be parsed."""

    def __init__(self, name: str) -> None:
        self.name, self.line, self.run, self.limit = name, 1, 0, settings.MEMORYHUB_MAX_BODY_BYTES

    def add(self, block: bytes) -> None:
        first = block.find(b"\n")
        if first == -1:
            self._grown(len(block))
            return
        self._grown(first)
        last = block.rfind(b"\n")
        if last - first - 1 > self.limit:  # a limit below a block's size: a line inside the block may be too long
            for offset, inner in enumerate(block[first + 1:last].split(b"\n"), start=1):
                if len(inner) > self.limit:
                    self._refuse(self.line + offset)
        self.line += block.count(b"\n")
        self.run = 0
        self._grown(len(block) - last - 1)

    def _grown(self, n: int) -> None:
        self.run += n
        if self.run > self.limit:
            self._refuse(self.line)

    def _refuse(self, line: int) -> None:
        raise _refused_file(f"{self.name}: line {line} is longer than {self.limit} bytes, more than any record can be.")


def _checked(fmt: str, upload: IO[bytes]) -> None:
    """Refuses (4xx naming what is wrong) a file that is not what its format says."""
    upload.seek(0)
    if fmt == ImportFormat.MEMORYHUB:
        try:
            with zipfile.ZipFile(upload) as archive:
                archive_manifest(archive)
        except zipfile.BadZipFile:
            raise _refused_file("The file is not a zip archive (format memoryhub).") from None
        # What zipfile raises for a member it cannot read: a compression method it does not
        # know, encryption, corrupt compressed data (zlib), data that ends early.
        except (NotImplementedError, RuntimeError, zlib.error, EOFError) as error:
            raise _refused_file(f"A member of the archive cannot be read: {error}.") from None
    else:
        try:
            PARSERS[fmt](upload)
        except foreign.ForeignFormatError as error:
            raise _refused_file(f"Not a {fmt} export: {error}.") from None
    upload.seek(0)


# -- asking for one ---------------------------------------------------------------------

def import_request(
    *, membership: Membership, upload: IO[bytes], filename: str, format: str, store: str, agent: str, user_id: str = "",
    dry_run: bool = False,
) -> Import:
    """A queued import of `upload` into the workspace's `store` and `agent`, started once the
    transaction commits; audited. The caller has checked the operator's role."""
    with transaction.atomic():
        job = _job(membership=membership, upload=upload, filename=filename, format=format, store=store, agent=agent, user_id=user_id,
                   dry_run=dry_run, requested_by=operator_actor(membership.user))
        size, digest = _store_upload(job, upload)
        Import.objects.filter(pk=job.pk).update(bytes=size, sha256=digest)
        job.bytes, job.sha256 = size, digest
        transaction.on_commit(lambda: tasking.dispatch(RUN_TASK, job.pk))
    _audit_import(job)
    return job


def _job(
    *, membership: Membership, upload: IO[bytes], filename: str, format: str, store: str, agent: str, user_id: str, dry_run: bool,
    requested_by: str,
) -> Import:
    """The import's record, once its target and its file are found good."""
    workspace = membership.workspace
    if format not in ImportFormat.values:
        raise ApplicationError(f"Unknown format {format!r}.", code="VALIDATION_ERROR", details={"formats": ImportFormat.values})
    target_store = Store.objects.filter(workspace=workspace, name=store).first()
    if target_store is None:
        raise NotFound(f"No store named {store!r} in this workspace.", code="STORE_NOT_FOUND")
    target_agent = Agent.objects.filter(workspace=workspace, name=agent).first()
    if target_agent is None:
        raise NotFound(f"No agent named {agent!r} in this workspace.", code="AGENT_NOT_FOUND")
    if not target_agent.stores.filter(pk=target_store.pk).exists():
        raise ApplicationError(f"Agent {agent!r} is not attached to store {store!r}.", code="STORE_NOT_ATTACHED")
    if format in (ImportFormat.CHATGPT, ImportFormat.CLAUDE) and not user_id:
        raise ApplicationError("A conversation export names nobody: say which end user it is about (user_id).", code="VALIDATION_ERROR")
    _checked(format, upload)
    return Import.objects.create(
        workspace=workspace, store=target_store, agent=target_agent, format=format, user_id=user_id, dry_run=dry_run,
        filename=filename[:255], requested_by=requested_by,
    )


def _store_upload(job: Import, upload: IO[bytes]) -> tuple[int, str]:
    digest, size, seq = hashlib.sha256(), 0, 0
    while block := upload.read(PART_BYTES):
        ImportPart.objects.create(import_job=job, seq=seq, data=block)
        digest.update(block)
        size += len(block)
        seq += 1
    return size, digest.hexdigest()


def _audit_import(job: Import) -> None:
    audit_record(
        actor=job.requested_by, action="import_requested", workspace=job.workspace, target=str(job.pk),
        details={"format": job.format, "store": job.store.name, "agent": job.agent.name, "dry_run": job.dry_run,
                 "filename": job.filename, "bytes": job.bytes, "sha256": job.sha256},
    )


def import_apply(*, membership: Membership, trial: Import) -> Import:
    """The import a finished dry run tried out, for real: the same upload, store and agent."""
    if not trial.dry_run or trial.status != JobStatus.DONE:
        raise Conflict("Only a finished dry run can be applied.", code="IMPORT_NOT_READY")
    applied_already = Conflict("This dry run was applied already (or its upload has expired).", code="IMPORT_NOT_READY")
    try:
        with transaction.atomic():
            # One import per dry run (a unique reference: two applies at once, one wins).
            job = Import.objects.create(
                workspace=trial.workspace, store=trial.store, agent=trial.agent, format=trial.format, user_id=trial.user_id,
                dry_run=False, filename=trial.filename, bytes=trial.bytes, sha256=trial.sha256, requested_by=operator_actor(membership.user),
                trial=trial,
            )
            # The upload moves to the real import (a dry run past its lifetime has none left).
            if not ImportPart.objects.filter(import_job=trial).update(import_job=job):
                raise applied_already
            transaction.on_commit(lambda: tasking.dispatch(RUN_TASK, job.pk))
    except IntegrityError:
        raise applied_already from None
    _audit_import(job)
    return job


# -- running one ------------------------------------------------------------------------

def import_run(*, import_id: int) -> Import | None:
    """Loads the upload. Claimed by a conditional update: a second job for the same import
    does nothing while the first runs."""
    claimed = job_claim(jobs=Import.objects.filter(pk=import_id))
    if not claimed:
        return Import.objects.filter(pk=import_id).first()
    job = Import.objects.select_related("workspace", "store", "agent").get(pk=import_id)
    with tempfile.TemporaryFile() as upload:
        for data in ImportPart.objects.filter(import_job=job).order_by("seq").values_list("data", flat=True).iterator(chunk_size=1):
            upload.write(data)
        upload.seek(0)
        _execute(job, upload, on_progress=_reported(job))
    return Import.objects.get(pk=job.pk)


def import_file(
    *, workspace: Workspace, path: Path, format: str, store: str, agent: str, user_id: str = "", dry_run: bool = False,
    on_progress: Callable[[int, int], None] = lambda done, total: None,
) -> Import:
    """An import read straight from `path` and run here and now (the command line's: an
    operator on the hub's machine), recorded and audited like one asked for over HTTP.
    The memories' vectors are left for the hub's indexer (every 15 s; searched exactly
    until then): started on this process's own task threads, it would keep the command
    from exiting until they were all in the index, minutes for a million."""
    owner = Membership(workspace=workspace)
    with open(path, "rb") as upload:
        job = _job(membership=owner, upload=upload, filename=path.name, format=format, store=store, agent=agent, user_id=user_id,
                   dry_run=dry_run, requested_by="system:manage.py import")
        _audit_import(job)
        job_claim(jobs=Import.objects.filter(pk=job.pk))
        _execute(job, upload, on_progress=on_progress, index_soon=False)
    return Import.objects.get(pk=job.pk)


def _execute(job: Import, upload: IO[bytes], *, on_progress: Callable[[int, int], None], index_soon: bool = True) -> None:
    """A real import commits chunk by chunk (a crash leaves what was loaded, and running it
    again skips that); a dry run loads everything in one transaction and rolls it back,
    counting what would have happened."""
    try:
        # Embedding an archive without vectors is the import's agent's model use.
        with metering.attributed(workspace_id=job.workspace_id, agent_id=job.agent_id):
            loader = _load(job, upload, on_progress, index_soon=index_soon)
    except Exception as error:  # recorded on the import for whoever asked; the job's log has the rest
        Import.objects.filter(pk=job.pk).update(status=JobStatus.FAILED, error=str(error)[:2000], finished_at=timezone.now())
        ImportPart.objects.filter(import_job=job).delete()
        raise
    if not job.dry_run:  # a dry run keeps its upload, for import_apply
        ImportPart.objects.filter(import_job=job).delete()
    counts = loader.tally.counts()
    with transaction.atomic():
        Import.objects.filter(pk=job.pk).update(
            status=JobStatus.DONE, progress=1.0, counts=counts, refusals=loader.tally.refusal_list(), finished_at=timezone.now(),
            heartbeat_at=timezone.now(),
        )
        notification_queue(
            workspace=job.workspace, event="import.completed",
            title=f"The {job.format} import {job.pk}{' (a dry run)' if job.dry_run else ''} finished",
            data={
                "import_id": str(job.pk), "format": job.format, "dry_run": job.dry_run, "status": JobStatus.DONE, "counts": counts,
                "url": public_url("/portability/"),
            },
        )


def _reported(job: Import) -> Callable[[int, int], None]:
    """The import's progress on its row; none for a dry run, whose one transaction would
    hide the row's changes until its end."""
    return (lambda done, total: None) if job.dry_run else progress_recorder(Import.objects.filter(pk=job.pk))


def _load(job: Import, upload: IO[bytes], on_progress: Callable[[int, int], None], *, index_soon: bool = True) -> Loader:
    if job.format == ImportFormat.MEMORYHUB:
        archive = zipfile.ZipFile(upload)
        manifest = archive_manifest(archive, verify=False)  # verified when it came in (_checked)
        origin = str(manifest.get("workspace") or "archive")
        # A restore keeps ids: only an archive this hub exported from this very workspace is one
        # (sealed for it), whatever a manifest says of itself; any other is a copy.
        restore = origin == job.workspace.slug and manifest_sealed_for(manifest, workspace_id=job.workspace.pk)
        present = {name.removesuffix(".jsonl") for name in manifest["files"]}
        kinds: list[tuple[str, Callable[[], Iterator[dict[str, Any]]]]] = [
            (kind, lambda kind=kind: (record_parsed(line) for line in _lines(archive, f"{kind}.jsonl")))
            for kind in ORDER if kind in present
        ]
        total = sum(int(manifest.get("counts", {}).get(kind, 0)) for kind, _ in kinds)
    else:
        origin, restore = job.format, False
        records = foreign_records(job.format, PARSERS[job.format](upload), user_id=job.user_id)
        kinds = [(kind, lambda rows=rows: iter(rows)) for kind, rows in records.items()]
        total = sum(len(rows) for rows in records.values())
    # A dry run's one transaction must see every row it writes: no second connection.
    writer = None if job.dry_run else BackgroundCopy()
    loader = Loader(workspace=job.workspace, store=job.store, agent=job.agent, import_id=job.pk, origin=origin, restore=restore,
                    embed=not job.dry_run, writer=writer, index_soon=index_soon)
    done = 0
    try:
        with transaction.atomic() if job.dry_run else contextlib.nullcontext():
            for kind, records_of in kinds:
                for chunk in prefetched(chunked(records_of())):
                    with transaction.atomic():
                        loader.load(kind, chunk)
                    done += len(chunk)
                    on_progress(done, total)
            loader.finish()
            if job.dry_run:
                transaction.set_rollback(True)
    finally:
        if writer is not None:
            writer.close()
    return loader


def _lines(archive: zipfile.ZipFile, name: str) -> Iterator[bytes]:
    """A member's non-empty lines, read in blocks of a megabyte (zipfile's own readline
    costs as much as parsing the JSON)."""
    rest = b""
    with archive.open(name) as member:
        while block := member.read(PART_BYTES):
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            yield from (line for line in lines if line.strip())
    if rest.strip():
        yield rest


def prefetched[T](items: Iterator[T], depth: int = 2) -> Iterator[T]:
    """`items`, produced a few ahead by a thread: the archive is inflated and parsed while
    the database writes the chunk before (both release the GIL while they work)."""
    ready: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(message: tuple[str, Any]) -> bool:
        """Waits for room, unless the consumer has gone (then False)."""
        while not stop.is_set():
            try:
                ready.put(message, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not offer(("item", item)):
                    return
            offer(("end", None))
        except BaseException as error:  # handed to the consumer, raised there
            offer(("error", error))

    producer = tasking.thread("memoryhub-import-reader", produce)
    try:
        while True:
            what, value = ready.get()
            if what == "end":
                return
            if what == "error":
                raise value
            yield value
    finally:
        stop.set()
        producer.join()


def foreign_records(fmt: str, parsed: Iterator[Any], *, user_id: str) -> dict[str, list[dict[str, Any]]]:
    """A foreign export's records in the archive's shape: conversations as sessions (named
    `<format>-<conversation id>`, so a second import meets them) with their messages in
    order; Mem0 memories as memories from an import, with their user and metadata."""
    if fmt == ImportFormat.MEM0:
        memories = []
        for memory in parsed:
            owner = user_id or memory.user_id
            if not owner:
                continue
            identity = memory.external_id or f"{owner}:{memory.content}"
            memories.append({
                "id": identity, "user_id": owner, "content": memory.content, "tags": memory.tags, "metadata": memory.metadata,
                "created_at": (memory.created_at or timezone.now()).isoformat(), "memory_type": "note", "scope": "agent",
                "source_kind": "import", "changed_by": f"import:{fmt}",
            })
        return {"memories": memories}
    sessions, messages = [], []
    for conversation in parsed:
        session_id = f"{fmt}-{conversation.external_id}"
        started = conversation.created_at or timezone.now()
        sessions.append({
            "session_id": session_id, "user_id": user_id, "created_at": started.isoformat(),
            "metadata": {**conversation.metadata, **({"title": conversation.title} if conversation.title else {})},
            "label": (conversation.title or "")[:200],
        })
        for seq, message in enumerate(conversation.messages, start=1):
            # A ChatGPT tool's output answers no call of ours (its export names none): kept as
            # the assistant's, marked, rather than as a tool result with nothing to answer.
            role, content = ("assistant", f"[tool output]\n{message.content}") if message.role == "tool" else (message.role, message.content)
            messages.append({
                "session": session_id, "seq": seq, "user_id": user_id, "role": role, "content": content,
                "created_at": (message.created_at or started).isoformat(),
            })
    return {"sessions": sessions, "messages": messages}


def imports_expired_delete() -> int:
    """Deletes the uploads of dry runs never applied, after the exports' lifetime."""
    cutoff = timezone.now() - timedelta(hours=settings.MEMORYHUB_EXPORT_TTL_HOURS)
    deleted, _ = ImportPart.objects.filter(import_job__dry_run=True, import_job__created_at__lt=cutoff).delete()
    return deleted
