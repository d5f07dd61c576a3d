"""`manage.py backup` and `manage.py restore`: a hub with a row in every table comes
back whole in a fresh data dir (vector search included), and a user purged after the
backup stays purged."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import tarfile
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pyrage import x25519
from django.core.management import CommandError, call_command
from django.db import connection

from memoryhub.backups.services import ROWS_LEFT_OUT, BackupError, Encryption, backup_decrypt, passphrase_read
from memoryhub.platform import embedded_pg
from memoryhub.compliance.services import purge_request
from memoryhub.core.models import AgentKey, Membership, Role
from memoryhub.core.services import api_key_revoke
from memoryhub.core.registry import user_field, user_models
from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, purge_finished, run_python
from tests.seed_every_table import SEED_USER, seed


# Every row of a table, as text, hashed: equal digests mean the same rows, value for value.
DIGEST = "SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM \"{table}\" t"
EMPTY_DIGEST = "d41d8cd98f00b204e9800998ecf8427e"  # md5 of ''


@pytest.fixture(scope="module")
def fresh_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data dir no hub has used: its embedded server is started by the restore."""
    path = tmp_path_factory.mktemp("restored")
    yield path
    # Immediate shutdown (SIGQUIT to the postmaster): nothing in it is worth a checkpoint,
    # and pg_ctl's wait can time out on a busy machine.
    pidfile = embedded_pg.pgdata_dir(path) / "postmaster.pid"
    if pidfile.exists():
        os.kill(int(pidfile.read_text().split()[0]), signal.SIGQUIT)


def manage(fresh: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORYHUB_DATA_DIR": str(fresh)}
    env.pop("DATABASE_URL", None)
    return run_python([sys.executable, "manage.py", *args], env=env)


def fresh_conn(fresh: Path) -> psycopg.Connection:
    return psycopg.connect(host=embedded_pg.ensure_running(fresh), user="postgres", dbname=embedded_pg.DATABASE_NAME, autocommit=True)


def digests(cursor: object, tables: list[str]) -> dict[str, tuple[int, str]]:
    found = {}
    for table in tables:
        cursor.execute(DIGEST.format(table=table))  # type: ignore[attr-defined]
        found[table] = tuple(cursor.fetchone())  # type: ignore[attr-defined]
    return found


def test_it_restores_every_row_into_a_fresh_data_dir(transactional_db: None, tmp_path: Path, fresh_dir: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_PURGE_JOURNAL = tmp_path / "journal.jsonl"
    counts = seed()
    empty = [table for table, n in counts.items() if not n]
    assert not empty, f"the seed left tables empty: {empty}"
    # The seeded entry as a live one searched by meaning (the seed fills every column,
    # its expiry and invalidation too) with the model's vector of a sentence.
    provider = get_provider()
    MemoryEntry.objects.update(
        expires_at=None, invalidated_at=None, embedding=provider.embed(["the customer prefers email"])[0],
        embedding_model=provider.model_id, embedding_dim=provider.dimensions,
    )
    entry = MemoryEntry.objects.get()
    with connection.cursor() as cursor:
        before = digests(cursor, list(counts))

    call_command("backup", str(tmp_path / "hub.backup"), stdout=open(os.devnull, "w"))  # noqa: SIM115

    done = manage(fresh_dir, "restore", str(tmp_path / "hub.backup"), "--force", "--purge-journal", str(settings.MEMORYHUB_PURGE_JOURNAL))
    assert done.returncode == 0, done.stderr
    assert "0 applied again" in done.stdout
    with fresh_conn(fresh_dir) as conn:
        after = digests(conn.cursor(), list(counts))
    # Every row comes back, but for console logins and answers kept for retries: a backup
    # holds nothing that opens the hub (a session) or is a key (a minted key's answer).
    assert {table: after[table] for table in ROWS_LEFT_OUT} == {table: (0, EMPTY_DIGEST) for table in ROWS_LEFT_OUT}
    assert {t: d for t, d in after.items() if t not in ROWS_LEFT_OUT} == {t: d for t, d in before.items() if t not in ROWS_LEFT_OUT}
    with tarfile.open(tmp_path / "hub.backup") as archive:
        assert {member.name: member.mode for member in archive.getmembers()} == {"manifest.json": 0o600, "database.pgdump": 0o600, "pseudonym_key": 0o600}
    assert (tmp_path / "hub.backup").stat().st_mode & 0o777 == 0o600
    assert settings.MEMORYHUB_PURGE_JOURNAL.stat().st_mode & 0o777 == 0o600
    # Vector search on the restored hub: the seeded entry's own vector finds it first.
    search = manage(fresh_dir, "shell", "-c", (
        "from memoryhub.core.models import Membership; from memoryhub.core.selectors import principal_for_membership;"
        "from memoryhub.memory.models import MemoryEntry; from memoryhub.memory.selectors import MemoryFilters; from memoryhub.memory.search import SearchRequest, memory_search;"
        "e = MemoryEntry.objects.get(); from memoryhub.memory.embeddings import get_provider; p = principal_for_membership(Membership.objects.get(workspace=e.workspace));"
        "hits = memory_search(principal=p, request=SearchRequest(filters=MemoryFilters(), mode='semantic', query_embedding=get_provider().embed(['how does the customer like to be contacted?'])[0]));"
        "print(hits[0].entry.pk, round(hits[0].score, 3))"
    ))
    assert search.returncode == 0, search.stderr
    found, score = search.stdout.splitlines()[-1].split()
    assert found == str(entry.pk) and float(score) > 0.3


def test_a_user_purged_after_the_backup_stays_purged(transactional_db: None, tmp_path: Path, fresh_dir: Path, settings) -> None:  # type: ignore[no-untyped-def]
    journal = tmp_path / "journal.jsonl"
    settings.MEMORYHUB_PURGE_JOURNAL = journal
    seed()
    kept = MemoryEntry.objects.get()
    kept.pk, kept.user_id, kept.key = None, "control-user", "control"
    kept.save()
    call_command("backup", str(tmp_path / "hub.backup"), stdout=open(os.devnull, "w"))  # noqa: SIM115

    purge = purge_request(membership=Membership.objects.get(), user_id=SEED_USER, dry_run=False, block_new_writes=True)
    assert purge_finished(purge.pk).status == "done"
    assert [json.loads(line)["purge_id"] for line in journal.read_text().splitlines()] == [purge.pk]

    done = manage(fresh_dir, "restore", str(tmp_path / "hub.backup"), "--force", "--purge-journal", str(journal))
    assert done.returncode == 0, done.stderr
    assert "1 applied again" in done.stdout
    with fresh_conn(fresh_dir) as conn:
        for model in user_models():
            column, table = user_field(model), model._meta.db_table
            condition = f'"{column}" @> ARRAY[%s]::varchar[]' if column == "user_ids" else f'"{column}" = %s'
            left = conn.execute(f'SELECT count(*) FROM "{table}" WHERE {condition}', [SEED_USER]).fetchone()[0]
            assert left == 0, f"{table} brought {SEED_USER} back"
        assert conn.execute("SELECT count(*) FROM memory_memoryentry WHERE user_id = 'control-user'").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM compliance_blockeduser WHERE user_hash = %s", [purge.user_hash]).fetchone()[0] == 1
        audit = conn.execute("SELECT details FROM compliance_auditentry WHERE action = 'purge_requested' ORDER BY id DESC LIMIT 1").fetchone()[0]
        assert audit["user_hash"] == purge.user_hash and "reapplied_after_restore" in audit

    # The restored hub holds data now: without --force a restore refuses and changes nothing.
    again = manage(fresh_dir, "restore", str(tmp_path / "hub.backup"), "--purge-journal", str(journal))
    assert again.returncode == 1 and "already holds data" in again.stderr and "--force" in again.stderr
    with fresh_conn(fresh_dir) as conn:
        assert conn.execute("SELECT count(*) FROM memory_memoryentry").fetchone()[0] == 1


def test_access_withdrawn_after_the_backup_stays_withdrawn(transactional_db: None, actors: Actors, tmp_path: Path, fresh_dir: Path, settings) -> None:  # type: ignore[no-untyped-def]
    journal = tmp_path / "journal.jsonl"
    settings.MEMORYHUB_PURGE_JOURNAL = journal
    call_command("backup", str(tmp_path / "hub.backup"), stdout=open(os.devnull, "w"))  # noqa: SIM115

    # After the backup: a key revoked, an operator removed, another made a viewer.
    bot_key = AgentKey.objects.get(agent=actors.bot)
    assert api_key_revoke(key=bot_key, actor="operator:owner")
    outsider_id, teammate_id = actors.outsider.pk, actors.teammate.pk
    actors.outsider.delete()
    owner = Membership.objects.get(pk=actors.owner.pk)
    owner.role = Role.VIEWER
    owner.save()
    assert [json.loads(line)["kind"] for line in journal.read_text().splitlines()] == ["key_revoked", "membership_removed", "role_changed"]

    done = manage(fresh_dir, "restore", str(tmp_path / "hub.backup"), "--force", "--purge-journal", str(journal))
    assert done.returncode == 0, done.stderr
    assert "3 revoked key(s), removed membership(s) or changed role(s) applied again" in done.stdout
    with fresh_conn(fresh_dir) as conn:
        assert conn.execute("SELECT revoked_at IS NOT NULL FROM core_agentkey WHERE id = %s", [bot_key.pk]).fetchone() == (True,)
        assert conn.execute("SELECT count(*) FROM core_agentkey WHERE revoked_at IS NOT NULL").fetchone() == (1,)  # only that one
        roles = dict(conn.execute("SELECT id, role FROM core_membership").fetchall())
        assert outsider_id not in roles and roles[actors.owner.pk] == Role.VIEWER and roles[teammate_id] == Role.VIEWER
        reapplied = conn.execute("SELECT action FROM compliance_auditentry WHERE details ? 'reapplied_after_restore' ORDER BY id").fetchall()
        assert [action for (action,) in reapplied] == ["key_revoked", "membership_removed", "role_changed"]


def test_without_a_purge_journal_a_restore_into_nothing_refuses(transactional_db: None, tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_PURGE_JOURNAL = tmp_path / "journal.jsonl"
    call_command("backup", str(tmp_path / "hub.backup"), stdout=open(os.devnull, "w"))  # noqa: SIM115
    # DATABASE_URL to a database that does not exist: nothing to read purges from.
    params = connection.get_connection_params()
    url = embedded_pg.database_url(params["host"], "memoryhub_restore_nowhere")
    env = {**os.environ, "DATABASE_URL": url, "MEMORYHUB_PURGE_JOURNAL": str(tmp_path / "missing.jsonl")}
    done = run_python([sys.executable, "manage.py", "restore", str(tmp_path / "hub.backup")], env=env, timeout=60)
    assert done.returncode == 1
    assert "no purge journal" in done.stderr and "would come back" in done.stderr


def test_with_database_url_it_uses_the_pg_dump_on_path_or_says_it_is_missing(transactional_db: None, tmp_path: Path) -> None:
    params = connection.get_connection_params()
    env = {**os.environ, "DATABASE_URL": embedded_pg.database_url(params["host"], params["dbname"]), "MEMORYHUB_PURGE_JOURNAL": str(tmp_path / "j")}
    command = [sys.executable, "manage.py", "backup", str(tmp_path / "external.backup")]
    # A machine with PostgreSQL 18's client tools on PATH (here: the wheel's).
    tools = str(embedded_pg.tool_path("pg_dump").parent)
    done = run_python(command, env={**env, "PATH": f"{tools}:{env['PATH']}"}, timeout=60)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run([f"{tools}/pg_restore", "--list"], input=_member(tmp_path / "external.backup", "database.pgdump"), capture_output=True)
    assert b"TABLE DATA public memory_memoryentry" in listed.stdout
    missing = run_python(command, env={**env, "PATH": "/nonexistent"}, timeout=60)
    assert missing.returncode == 1 and "pg_dump was not found on PATH" in missing.stderr and "postgresql-client" in missing.stderr


def _member(archive: Path, name: str) -> bytes:
    with tarfile.open(archive) as tar:
        return tar.extractfile(name).read()  # type: ignore[union-attr]


def test_an_encrypted_backup_restores_only_with_its_key(transactional_db: None, actors: Actors, tmp_path: Path, fresh_dir: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_PURGE_JOURNAL = tmp_path / "journal.jsonl"
    MemoryEntry.objects.create(workspace=actors.workspace, store=actors.bot.stores.get(), agent=actors.bot, user_id="u1",
                               content="the customer's card ends 4242")
    made = io.StringIO()
    call_command("backup_identity", str(tmp_path / "identity.txt"), stdout=made)
    public_key = made.getvalue().split()[-1]
    assert public_key.startswith("age1") and (tmp_path / "identity.txt").stat().st_mode & 0o777 == 0o600
    with pytest.raises(CommandError, match="never overwritten"):
        call_command("backup_identity", str(tmp_path / "identity.txt"))

    call_command("backup", str(tmp_path / "sealed.backup"), "--encrypt-to", public_key, stdout=open(os.devnull, "w"))  # noqa: SIM115
    sealed = (tmp_path / "sealed.backup").read_bytes()
    assert sealed.startswith(b"age-encryption.org/v1") and b"4242" not in sealed and not tarfile.is_tarfile(tmp_path / "sealed.backup")

    restore = ("restore", str(tmp_path / "sealed.backup"), "--force", "--purge-journal", str(settings.MEMORYHUB_PURGE_JOURNAL))
    # Refused before anything is touched (here, in this process: the test's own database stays).
    with pytest.raises(CommandError, match=r"is encrypted \(age\).*--identity"):
        call_command(*restore)
    (tmp_path / "other.txt").write_text(f"{x25519.Identity.generate()}\n")
    with pytest.raises(CommandError, match="could not be decrypted"):
        call_command(*restore, "--identity", str(tmp_path / "other.txt"))
    done = manage(fresh_dir, *restore, "--identity", str(tmp_path / "identity.txt"))
    assert done.returncode == 0, done.stderr
    with fresh_conn(fresh_dir) as conn:
        assert conn.execute("SELECT content FROM memory_memoryentry").fetchall() == [("the customer's card ends 4242",)]

    # Or with a passphrase, from a file: the same tar inside (restoring it is the path above).
    (tmp_path / "passphrase").write_text("correct horse battery staple\n")
    call_command("backup", str(tmp_path / "pass.backup"), "--passphrase-file", str(tmp_path / "passphrase"), stdout=open(os.devnull, "w"))  # noqa: SIM115
    assert (tmp_path / "pass.backup").read_bytes().startswith(b"age-encryption.org/v1")
    opened = tmp_path / "pass.tar"
    backup_decrypt(tmp_path / "pass.backup", opened, Encryption(passphrase=passphrase_read(tmp_path / "passphrase")))
    assert set(tarfile.open(opened).getnames()) == {"manifest.json", "database.pgdump", "pseudonym_key"}
    with pytest.raises(BackupError, match="could not be decrypted"):
        backup_decrypt(tmp_path / "pass.backup", tmp_path / "wrong.tar", Encryption(passphrase="not the passphrase at all"))
