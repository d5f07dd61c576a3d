"""`manage.py backup` and `manage.py restore`: the hub's database in one file.

A backup is a tar holding `manifest.json` (hub version, migrations, time, last purge
id, pseudonym key fingerprint), `database.pgdump` (pg_dump's custom format, compressed)
and, when the key lives in the data dir, `pseudonym_key`, without which the restored
block list and receipts would not match anyone. pg_dump and pg_restore are the embedded
server's own (same major version, always there) or, with DATABASE_URL, those on PATH.

Restoring must not bring back users erased since the backup: the purges are read from
the purge journal (compliance/journal.py) and from the database being replaced, and
every one the backup does not show as done is applied again (docs/operations/backups.md, "Backups").
So is access withdrawn since: revoked keys, removed memberships, changed roles.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pyrage
from django.conf import settings
from django.core.management import call_command
from django.db import connection, connections
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone
from pyrage import x25519

import memoryhub
from memoryhub.platform import embedded_pg
from memoryhub.compliance.journal import JournalEntry, journal_path, journal_read, journal_touch, pseudonym_key_fingerprint
from memoryhub.core.jobs import JobStatus
from memoryhub.compliance.models import PurgeRequest
from memoryhub.compliance.services import purge_reapply
from memoryhub.core.journal import KEY_REVOKED, Withdrawal, withdrawals_read
from memoryhub.core.models import AgentKey, IdempotencyRecord, OperatorKey
from memoryhub.core.services import withdrawals_reapply

MANIFEST, DUMP, KEY = "manifest.json", "database.pgdump", "pseudonym_key"
FORMAT = 1
# Tables whose rows stay out of a backup (their schema goes): console logins, which would
# open the console to whoever holds the file, and answers kept for retries (the restored
# hub starts with none; agents retry with new keys after a restore anyway).
ROWS_LEFT_OUT = ("django_session", IdempotencyRecord._meta.db_table)


class BackupError(Exception):
    """Why a backup or restore was refused or failed, in words for the operator."""


def _embedded() -> bool:
    return settings.DATABASES["default"]["ENGINE"] == "memoryhub.platform.db_embedded"


def pg_tool(name: str) -> str:
    """The embedded server's own pg_dump/pg_restore, or the one on PATH for an external
    database (it must be at least the server's major version: pg_dump says so if not)."""
    if _embedded():
        return str(embedded_pg.tool_path(name))
    found = shutil.which(name)
    if not found:
        raise BackupError(
            f"{name} was not found on PATH. With DATABASE_URL the hub uses the client tools of this machine: "
            f"install PostgreSQL's client (Debian: apt-get install postgresql-client) of the server's major version or newer."
        )
    return found


def _target() -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """Command-line arguments and environment naming the hub's database for the pg tools,
    and psycopg's connection keywords."""
    params = connection.get_connection_params()
    kwargs = {k: params[k] for k in ("dbname", "user", "host", "port", "password") if params.get(k)}
    args = [f"--dbname={kwargs['dbname']}"]
    env = dict(os.environ)
    if "host" in kwargs:
        args.append(f"--host={kwargs['host']}")
    if "port" in kwargs:
        args.append(f"--port={kwargs['port']}")
    if "user" in kwargs:
        args.append(f"--username={kwargs['user']}")
    if "password" in kwargs:
        env["PGPASSWORD"] = str(kwargs["password"])
    for name, value in (settings.DATABASES["default"].get("OPTIONS") or {}).items():
        if name == "sslmode":
            env["PGSSLMODE"] = str(value)
    return args, env, kwargs


def _run(command: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        hint = ""
        if "version mismatch" in done.stderr:
            hint = " Install the PostgreSQL client tools of the server's major version (or newer) and put them first on PATH."
        raise BackupError(f"{Path(command[0]).name} failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}{hint}")


def _applied_migrations(cursor: Any) -> dict[str, list[str]]:
    cursor.execute("SELECT to_regclass('django_migrations') IS NOT NULL")
    if not cursor.fetchone()[0]:
        return {}
    cursor.execute("SELECT app, name FROM django_migrations ORDER BY app, name")
    applied: dict[str, list[str]] = {}
    for app, name in cursor.fetchall():
        applied.setdefault(app, []).append(name)
    return applied


@dataclass(frozen=True)
class Encryption:
    """How a backup is (or was) encrypted with age (pyrage): to public keys (`age1…`,
    the hub never holds what decrypts them), or with a passphrase. For a restore,
    `identities` are the secret keys (`AGE-SECRET-KEY-1…`) that decrypt."""

    recipients: tuple[str, ...] = ()
    identities: tuple[str, ...] = ()
    passphrase: str | None = None

    def __bool__(self) -> bool:
        return bool(self.recipients or self.identities or self.passphrase)


AGE_HEADER = b"age-encryption.org/v1"


def backup_create(path: Path, *, encryption: Encryption = Encryption()) -> dict[str, Any]:
    """Write the backup to `path` (mode 600; made beside it, then renamed), encrypted
    with age when `encryption` says so."""
    recipients = _recipients(encryption.recipients)
    args, env, _ = _target()
    try:
        journal_touch()
    except OSError as error:
        raise BackupError(f"cannot create the purge journal {journal_path()} (MEMORYHUB_PURGE_JOURNAL): {error}") from error
    with connection.cursor() as cursor:
        migrations = _applied_migrations(cursor)
        cursor.execute("SELECT max(id) FROM compliance_purgerequest")
        last_purge_id = cursor.fetchone()[0]
    manifest = {
        "format": FORMAT, "hub_version": memoryhub.VERSION, "created_at": timezone.now().isoformat(),
        "database": args[0].split("=", 1)[1], "migrations": migrations, "last_purge_id": last_purge_id,
        "pseudonym_key_fingerprint": pseudonym_key_fingerprint(),
    }
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".backup-") as scratch:
        dump = Path(scratch) / DUMP
        # --no-owner/--no-privileges: the dump restores under whichever role restores it.
        left_out = [f"--exclude-table-data={table}" for table in ROWS_LEFT_OUT]
        _run([pg_tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges", *left_out, f"--file={dump}", *args], env)
        partial = Path(scratch) / "backup.tar"
        with tarfile.open(partial, "w") as archive:
            _add(archive, MANIFEST, json.dumps(manifest, indent=2).encode())
            archive.add(dump, arcname=DUMP, filter=_private)
            if not os.environ.get("MEMORYHUB_PSEUDONYM_KEY"):
                _add(archive, KEY, settings.MEMORYHUB_PSEUDONYM_KEY.encode())
        if encryption:
            sealed = Path(scratch) / "backup.age"
            _encrypted(partial, sealed, recipients=recipients, passphrase=encryption.passphrase)
            partial = sealed
        partial.chmod(0o600)
        partial.replace(path)
    manifest["bytes"] = path.stat().st_size
    manifest["encrypted"] = bool(encryption)
    return manifest


def _recipients(keys: tuple[str, ...]) -> list[Any]:
    try:
        return [x25519.Recipient.from_str(key.strip()) for key in keys]
    except pyrage.RecipientError as error:
        raise BackupError(f"not an age public key (age1…): {error}") from None


def _encrypted(source: Path, target: Path, *, recipients: list[Any], passphrase: str | None) -> None:
    if recipients:
        pyrage.encrypt_file(str(source), str(target), recipients)  # streamed
    else:  # age's passphrase mode has no streaming form in pyrage: the backup passes through memory
        target.write_bytes(pyrage.passphrase.encrypt(source.read_bytes(), passphrase))


def backup_decrypt(source: Path, target: Path, encryption: Encryption) -> None:
    """The tar inside an age-encrypted backup, or BackupError saying what is missing."""
    if not encryption.identities and not encryption.passphrase:
        raise BackupError(f"{source} is encrypted (age): give the secret key that decrypts it (--identity FILE) or its passphrase (--passphrase-file FILE).")
    try:
        if encryption.identities:
            identities = [x25519.Identity.from_str(key.strip()) for key in encryption.identities]
            pyrage.decrypt_file(str(source), str(target), identities)
        else:
            target.write_bytes(pyrage.passphrase.decrypt(source.read_bytes(), encryption.passphrase))
    except (pyrage.DecryptError, pyrage.IdentityError) as error:
        raise BackupError(f"{source} could not be decrypted with what was given ({error}).") from None


def backup_identity_create(path: Path) -> str:
    """A new age key pair: the secret key written to `path` (mode 600, refused if it
    exists), the public key returned, to encrypt backups to (--encrypt-to)."""
    identity = x25519.Identity.generate()
    try:
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
            file.write(f"# public key: {identity.to_public()}\n{identity}\n")
    except FileExistsError:
        raise BackupError(f"{path} exists already; a secret key is never overwritten.") from None
    return str(identity.to_public())


def passphrase_read(path: Path) -> str:
    """A passphrase from its file (a file, not an argument: arguments show in `ps`)."""
    try:
        passphrase = path.read_text().rstrip("\r\n")
    except OSError as error:
        raise BackupError(f"cannot read the passphrase file {path}: {error}") from None
    if len(passphrase) < 12:
        raise BackupError(f"the passphrase in {path} is shorter than 12 characters.")
    return passphrase


def identities_read(path: Path) -> tuple[str, ...]:
    """The secret keys of an age identity file (as age-keygen and backup_identity write it)."""
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise BackupError(f"cannot read the identity file {path}: {error}") from None
    keys = tuple(line.strip() for line in lines if line.strip().startswith("AGE-SECRET-KEY-"))
    if not keys:
        raise BackupError(f"{path} holds no age secret key (AGE-SECRET-KEY-1…).")
    return keys


def _private(member: tarfile.TarInfo) -> tarfile.TarInfo:
    member.mode, member.uid, member.gid, member.uname, member.gname = 0o600, 0, 0, "", ""
    return member


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o600, int(timezone.now().timestamp())
    archive.addfile(info, io.BytesIO(data))


@dataclass
class RestoreReport:
    manifest: dict[str, Any]
    migrated: bool = False
    purges_reapplied: list[int] = field(default_factory=list)  # the new purges' ids
    journal_entries: int = 0
    withdrawals_reapplied: int = 0  # revoked keys, removed memberships, changed roles


def _current_state(kwargs: dict[str, Any]) -> tuple[bool, list[JournalEntry], list[Withdrawal]]:
    """Whether the target database holds data, the purges it records and the keys it
    knows revoked (read before it is replaced: they may be newer than the journal's
    last line)."""
    try:
        with psycopg.connect(**kwargs, autocommit=True) as conn:
            tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
            has_data = any(conn.execute(f'SELECT EXISTS (SELECT 1 FROM "{t}")').fetchone()[0] for t in ("core_workspace", "auth_user") if t in tables)
            entries: list[JournalEntry] = []
            if "compliance_purgerequest" in tables:
                blocked = set()
                if "compliance_blockeduser" in tables:
                    blocked = {tuple(row) for row in conn.execute("SELECT workspace_id, user_hash FROM compliance_blockeduser")}
                key = pseudonym_key_fingerprint()
                for pk, workspace_id, digest in conn.execute("SELECT id, workspace_id, user_hash FROM compliance_purgerequest WHERE NOT dry_run"):
                    entries.append(JournalEntry(pk, workspace_id, digest, (workspace_id, digest) in blocked, key))
            revoked = [
                Withdrawal(kind=KEY_REVOKED, id=pk, details={"key": model._meta.model_name, "prefix": prefix})
                for model in (AgentKey, OperatorKey) if model._meta.db_table in tables
                for pk, prefix in conn.execute(f'SELECT id, prefix FROM "{model._meta.db_table}" WHERE revoked_at IS NOT NULL')
            ]
            return has_data, entries, revoked
    except psycopg.OperationalError as error:
        if "does not exist" in str(error):
            return False, [], []
        raise BackupError(f"cannot reach the database to restore into: {error}") from error


def backup_restore(
    path: Path, *, force: bool, journal: Path | None, without_journal: bool, say: Callable[[str], None],
    encryption: Encryption = Encryption(),
) -> RestoreReport:
    if not path.is_file():
        raise BackupError(f"{path}: no such backup file.")
    args, env, kwargs = _target()
    with tempfile.TemporaryDirectory(prefix="memoryhub-restore-") as scratch:
        with path.open("rb") as file:
            sealed = file.read(len(AGE_HEADER)) == AGE_HEADER
        tar = path
        if sealed:
            tar = Path(scratch) / "backup.tar"
            backup_decrypt(path, tar, encryption)
        try:
            with tarfile.open(tar) as archive:
                archive.extractall(scratch, filter="data")
        except tarfile.TarError as error:
            raise BackupError(f"{path} is not a MemoryHub backup ({error}).") from error
        try:
            manifest = json.loads((Path(scratch) / MANIFEST).read_text())
            dump = Path(scratch) / DUMP
            assert dump.is_file() and manifest.get("format") == FORMAT
        except (OSError, ValueError, AssertionError) as error:
            raise BackupError(f"{path} is not a MemoryHub backup (no manifest or dump).") from error
        key_file = Path(scratch) / KEY
        backup_key = key_file.read_text() if key_file.is_file() else None
        report = RestoreReport(manifest=manifest)

        # 1. Refusals, before anything is touched.
        known = MigrationLoader(None, ignore_no_migrations=True).disk_migrations
        unknown = [f"{app}.{name}" for app, names in manifest["migrations"].items() for name in names if (app, name) not in known]
        if unknown:
            raise BackupError(
                f"this backup was made by a newer MemoryHub ({manifest['hub_version']}): migrations {', '.join(unknown[:5])} are unknown "
                f"to this code ({memoryhub.VERSION}). Restore it with the release that made it."
            )
        has_data, entries, withdrawals = _current_state(kwargs)
        if has_data and not force:
            raise BackupError(
                f"the database {kwargs['dbname']} already holds data; restoring replaces all of it with the backup of "
                f"{manifest['created_at']}. Stop the hub, then run again with --force if that is what you want."
            )
        journal = journal or journal_path()
        if journal.is_file():
            entries = journal_read(journal) + entries
            withdrawals = withdrawals_read(journal) + withdrawals
        elif not without_journal and not entries:
            raise BackupError(
                f"no purge journal at {journal}, and no database to read purges from: users erased after this backup was "
                "made would come back. Give the journal of the hub the backup came from (--purge-journal PATH, or "
                "MEMORYHUB_PURGE_JOURNAL), or --without-purge-journal if you know no purge happened since the backup."
            )
        report.journal_entries = len(entries)
        wanted_key = manifest["pseudonym_key_fingerprint"]
        if pseudonym_key_fingerprint() != wanted_key:
            if os.environ.get("MEMORYHUB_PSEUDONYM_KEY") or backup_key is None or pseudonym_key_fingerprint(backup_key) != wanted_key:
                raise BackupError(
                    "the pseudonym key in force is not the one of the backup (purge receipts and the block list would match "
                    "nobody): set MEMORYHUB_PSEUDONYM_KEY to the key of the hub that made it."
                )
        foreign = [e for e in entries if e.key != wanted_key]
        if foreign:
            raise BackupError(
                f"{len(foreign)} purge(s) (ids {', '.join(str(e.purge_id) for e in foreign[:5])}) were recorded under another "
                "pseudonym key than the backup's, so the users they erased cannot be recognised in it; refusing rather than "
                "bringing them back."
            )

        # 2. Replace the database.
        connections.close_all()
        if hasattr(connection, "close_pool"):
            connection.close_pool()
        if _embedded():
            with psycopg.connect(**{**kwargs, "dbname": "postgres"}, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{kwargs["dbname"]}" WITH (FORCE)')
                conn.execute(f'CREATE DATABASE "{kwargs["dbname"]}"')
        say(f"restoring the backup of {manifest['created_at']} (MemoryHub {manifest['hub_version']}) into {kwargs['dbname']}…")
        _run([pg_tool("pg_restore"), "--clean", "--if-exists", "--no-owner", "--no-privileges", "--single-transaction",
              "--exit-on-error", *args, str(dump)], env)
        if backup_key is not None and pseudonym_key_fingerprint() != wanted_key:
            key_path = Path(settings.MEMORYHUB_DATA_DIR) / "pseudonym_key"
            if key_path.exists():
                key_path.replace(key_path.with_name(f"pseudonym_key.replaced-{timezone.now():%Y%m%dT%H%M%S}"))
            key_path.write_text(backup_key)
            key_path.chmod(0o600)
            settings.MEMORYHUB_PSEUDONYM_KEY = backup_key
            say(f"pseudonym key of the backup installed in {key_path}")

    # 3. Bring the schema to this code, then erase again whoever was erased since.
    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        call_command("migrate", "--no-input", verbosity=0)
        report.migrated = True
    applied = set(PurgeRequest.objects.filter(status=JobStatus.DONE, dry_run=False).values_list("pk", "user_hash"))
    source = f"backup of {manifest['created_at']}"
    for entry in entries:
        if (entry.purge_id, entry.user_hash) in applied:
            continue
        for purge in purge_reapply(workspace_id=entry.workspace_id, user_hash_value=entry.user_hash, blocked=entry.blocked, source=source):
            report.purges_reapplied.append(purge.pk)
            applied.add((entry.purge_id, entry.user_hash))
    report.withdrawals_reapplied = withdrawals_reapply(withdrawals=withdrawals, source=source)
    return report

