"""Shared fixtures: named actors, API clients, a live ASGI hub and a browser.

Actors (healthchecks style): in the `acme` workspace, `owner` is an admin operator,
`teammate` a viewer; `bot` and `peer` are agents attached to the store `default`, and
`loner` an agent attached only to the store `other`. `outsider` is an admin of the
foreign workspace `globex`, whose agent is `spy`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from django.db import transaction

from benchmarks import harness
from benchmarks.harness import HubProcess
from memoryhub.core import services
from memoryhub.core.models import Agent, Membership, Role, Workspace
from tests import forked_processes
from tests.schema_validation import SchemaCheckedClient
from tests.webhook_receiver import Receiver, webhook_receiver

BASE_DIR = Path(__file__).resolve().parent.parent
PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """Each test process's database is cloned from one already migrated, instead of each
    running every migration itself (10-12 s apiece with three processes on two cores)."""
    from django.conf import settings

    settings.DATABASES["default"]["TEST"]["TEMPLATE"] = migrated_template()


def migrated_template() -> str:
    """The name of a database with every migration applied, made once for this set of
    migrations and pinned packages (its name says which), and kept for the next run."""
    import fcntl

    import psycopg
    from django.conf import settings

    name = f"test_template_{sources_digest(BASE_DIR.glob('memoryhub/*/migrations/*.py'))[:16]}"
    url = harness.current_database_url()
    server = url.rsplit("/", 1)[0]
    settings.MEMORYHUB_DATA_DIR.mkdir(parents=True, exist_ok=True)
    with open(settings.MEMORYHUB_DATA_DIR / "test-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one test process builds it; the others wait for it
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                return name
            # Templates of earlier migrations, and one a stopped run left half built.
            for (old,) in admin.execute("SELECT datname FROM pg_database WHERE starts_with(datname, 'test_template_')").fetchall():
                admin.execute(f'DROP DATABASE IF EXISTS "{old}" WITH (FORCE)')
            building = f"{name}_building"
            admin.execute(f'DROP DATABASE IF EXISTS "{building}"')
            admin.execute(f'CREATE DATABASE "{building}"')
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--no-input", "--verbosity", "0"], cwd=BASE_DIR, check=True,
                env={**os.environ, "DATABASE_URL": f"{server}/{building}"},
            )
            # Renamed once whole: a run stopped mid-way leaves no template half made.
            admin.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
    return name


# The local model embeds on one thread in every test process and hub (their hubs inherit the
# environment): left to ONNX Runtime, each takes a pool of threads as large as the machine,
# which spin while they wait, in a dozen processes sharing two cores.
os.environ["MEMORYHUB_EMBEDDINGS_THREADS"] = "1"
# The tests' webhook receivers listen on 127.0.0.1 (tests/webhook_receiver.py): the hubs the
# tests start allow it (this process's settings are read before this line; its tests say so
# with the `settings` fixture). The address guard is tested with other hosts.
os.environ["MEMORYHUB_WEBHOOK_ALLOWED_HOSTS"] = "127.0.0.1"


@pytest.fixture(scope="session", autouse=True)
def local_model_on_one_thread() -> None:
    from django.conf import settings

    settings.MEMORYHUB_EMBEDDINGS_THREADS = 1
    # Usage is written when read (GET /usage) or a budget is checked, on the test's own
    # connection: a background writer's would not see a test's uncommitted workspace.
    settings.MEMORYHUB_USAGE_FLUSH_SECONDS = 0


# Rows migrations write once (content types, permissions): a flush that kept them needs
# no post_migrate handlers to write them all again.
KEPT_BY_FLUSH = frozenset({"django_content_type", "auth_permission"})


def emptied_after_transactional_test(self: Any) -> None:
    """TransactionTestCase's flush, cheaper: every table emptied by DELETE in one round
    trip, with triggers (foreign keys, the audit log's append-only guard) off for it. Its
    TRUNCATE gave every table and index new files and post_migrate wrote content types and
    permissions again: 0.33 s after each of 220 transactional tests, where this takes 0.03."""
    from django.db import connections

    for name in self._databases_names(include_mirrors=False):
        connection = connections[name]
        tables = [t for t in connection.introspection.django_table_names(only_existing=True, include_views=False) if t not in KEPT_BY_FLUSH]
        statements = ["SET LOCAL session_replication_role = replica", *(f"DELETE FROM {connection.ops.quote_name(t)}" for t in tables)]
        with transaction.atomic(using=name), connection.cursor() as cursor:
            cursor.execute("; ".join(statements))


@pytest.fixture(scope="session", autouse=True)
def cheap_flush() -> None:
    from django.test import TransactionTestCase

    TransactionTestCase._fixture_teardown = emptied_after_transactional_test


@pytest.fixture(autouse=True)
def usage_counted_by_this_test_stays_with_it() -> Iterator[None]:
    """What a test counted and did not write goes with its database: left over, the next
    test's first read of usage (or the flush at exit, into the developer's database) would write it."""
    from memoryhub.usage import metering

    yield
    metering.discard_pending()


@pytest.fixture(scope="session", autouse=True)
def collected_static() -> None:
    """Pages are served as in production: hashed static files through WhiteNoise, which
    needs `collectstatic` to have run (make run does it too)."""
    import fcntl

    from django.conf import settings
    from django.core.management import call_command

    settings.MEMORYHUB_DATA_DIR.mkdir(parents=True, exist_ok=True)
    # One pytest-xdist worker at a time: two copying the same files trip over each other.
    with open(settings.MEMORYHUB_DATA_DIR / "collectstatic.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # Hashing and compressing every file costs each test process 14 s of CPU: done
        # again only when a source file or a pinned package (Django's, DRF's) changed.
        collected = Path(settings.STATIC_ROOT) / ".collected-from"
        sources = sources_digest((BASE_DIR / "static").rglob("*"))
        if collected.exists() and collected.read_text() == sources:
            return
        call_command("collectstatic", "--no-input", verbosity=0)
        collected.write_text(sources)


def sources_digest(paths: Iterable[Path]) -> str:
    """The sha256 of the pinned packages and of the files at `paths` (their names and
    contents): what a template database or the collected static files were made from."""
    import hashlib

    digest = hashlib.sha256((BASE_DIR / "constraints.txt").read_bytes())
    for path in sorted(path for path in paths if path.is_file()):
        digest.update(path.relative_to(BASE_DIR).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


@dataclass
class Actors:
    workspace: Workspace
    foreign_workspace: Workspace
    owner: Membership
    teammate: Membership
    outsider: Membership
    bot: Agent
    peer: Agent
    loner: Agent
    spy: Agent
    bot_key: str
    peer_key: str
    loner_key: str
    spy_key: str
    owner_key: str
    teammate_key: str
    outsider_key: str


@pytest.fixture
def actors(db: None) -> Actors:
    workspace = services.workspace_get_or_create(slug="acme")
    foreign = services.workspace_get_or_create(slug="globex")
    owner = services.operator_get_or_create(username="owner", workspace=workspace, role=Role.ADMIN)
    teammate = services.operator_get_or_create(username="teammate", workspace=workspace, role=Role.VIEWER)
    outsider = services.operator_get_or_create(username="outsider", workspace=foreign, role=Role.ADMIN)
    store = services.store_get_or_create(workspace=workspace, name="default")
    bot = services.agent_get_or_create(workspace=workspace, name="bot", stores=[store])
    peer = services.agent_get_or_create(workspace=workspace, name="peer", stores=[store])
    other_store = services.store_get_or_create(workspace=workspace, name="other")
    loner = services.agent_get_or_create(workspace=workspace, name="loner", stores=[other_store])
    spy_store = services.store_get_or_create(workspace=foreign, name="default")
    spy = services.agent_get_or_create(workspace=foreign, name="spy", stores=[spy_store])
    return Actors(
        workspace=workspace,
        foreign_workspace=foreign,
        owner=owner,
        teammate=teammate,
        outsider=outsider,
        bot=bot,
        peer=peer,
        loner=loner,
        spy=spy,
        bot_key=services.agent_key_issue(agent=bot)[1],
        peer_key=services.agent_key_issue(agent=peer)[1],
        loner_key=services.agent_key_issue(agent=loner)[1],
        spy_key=services.agent_key_issue(agent=spy)[1],
        owner_key=services.operator_key_issue(membership=owner)[1],
        teammate_key=services.operator_key_issue(membership=teammate)[1],
        outsider_key=services.operator_key_issue(membership=outsider)[1],
    )


def approver(actors: Actors) -> Membership:
    """A third operator of `acme`, "reviewer", with the approver role (approvals, memory review)."""
    return services.operator_get_or_create(username="reviewer", workspace=actors.workspace, role=Role.APPROVER)


def approver_key(actors: Actors) -> str:
    return services.operator_key_issue(membership=approver(actors))[1]


@pytest.fixture
def passwords(actors: Actors) -> str:
    """Gives owner, teammate and outsider the password PASSWORD, for tests that log in
    through the login form. (Hashing is slow on purpose, so only those tests pay.)"""
    encoded = password_hash()
    for membership in (actors.owner, actors.teammate, actors.outsider):
        membership.user.password = encoded
        membership.user.save(update_fields=["password"])
    return PASSWORD


@functools.cache
def password_hash() -> str:
    """PASSWORD hashed once per test process, as the hub would (0.85 s here): the same
    hash serves every user and every test, where hashing per user cost 2.6 s a test."""
    from django.contrib.auth.hashers import make_password

    return make_password(PASSWORD)


def api_client(key: str | None = None) -> SchemaCheckedClient:
    """A DRF APIClient (with the key, if given) whose every /api/v1/ answer is checked
    against the OpenAPI schema (tests/schema_validation.py)."""
    client = SchemaCheckedClient()
    if key:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def assert_error(response: object, status: int, code: str) -> dict:
    """The contract's envelope: {"error": {"code", "message", "details"}}."""
    assert response.status_code == status, (response.status_code, getattr(response, "content", b"")[:500])
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    return body["error"]


def poll[T](check: Callable[[], T], *, timeout: float = 10.0, interval: float = 0.05) -> T | None:
    """`check()`'s first truthy answer, asked every `interval` seconds until `timeout`
    (None then): a wait that ends as soon as what it waits for is true, never a sleep
    of a fixed length. The caller asserts on the answer, with its own message."""
    deadline = time.monotonic() + timeout
    while True:
        if answer := check():
            return answer
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


def live_gauges(hub: HubProcess, operator_key: str) -> dict[str, Any]:
    """What the hub holds open for clients right now (/healthz "live"): streams, approval
    waiters, Channels group memberships. What a test polls instead of sleeping."""
    return httpx.get(f"{hub.url}/healthz", headers={"Authorization": f"Bearer {operator_key}"}, timeout=30).json()["live"]


def once(condition: Callable[[], object], action: Callable[[], object], *, timeout: float = 30) -> tuple[threading.Thread, list[BaseException]]:
    """Run `action` on another thread as soon as `condition()` holds (an operator who decides
    once the agent waits); the list gets what went wrong, for the test to assert on."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            assert poll(condition, timeout=timeout), f"not within {timeout} s: {condition}"
            action()
        except BaseException as error:  # shown by the test, not lost with the thread
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors


def purge_finished(purge_id: int, *, timeout: float = 60, storage_cleaned: bool = False) -> Any:
    """The purge once it has finished, done or failed (with `storage_cleaned`, once its
    storage clean-up has run too); the test fails if it has not within `timeout` s.
    Purges run in the background: in the hub's threads, a Celery worker, or this process."""
    from memoryhub.core.jobs import JobStatus
    from memoryhub.compliance.models import PurgeRequest

    def finished() -> PurgeRequest | None:
        purge = PurgeRequest.objects.get(pk=purge_id)
        over = purge.status in (JobStatus.DONE, JobStatus.FAILED) and (purge.storage_cleaned_at is not None or not storage_cleaned)
        return purge if over else None

    purge = poll(finished, timeout=timeout)
    assert purge is not None, f"purge {purge_id} did not finish within {timeout} s: {PurgeRequest.objects.get(pk=purge_id).status}"
    return purge


def start_hub(extra_env: dict[str, str] | None = None, **options: Any) -> HubProcess:
    """`uvicorn memoryhub.asgi:application` in its own process, on the test database
    (`options`: harness.start_hub's log_level and log_file), forked from a process that
    has its libraries imported already (tests/forked_processes.py)."""
    return harness.start_hub(database_url=harness.current_database_url(), extra_env=extra_env, **options)


# Every process the tests started (hubs, workers, agents): none may outlive the run.
started_processes: list[harness.ServerProcess] = []


def start_python(args: list[str], *, env: dict[str, str], stdout: int | None = None) -> harness.ServerProcess:
    """`[sys.executable, "-m", module, …]` started from the project's folder, forked from a
    process that has its libraries imported already (tests/forked_processes.py); its
    output to the file descriptor `stdout` (both streams), or this process's."""
    launcher = forked_processes.launcher()
    if launcher is not None:
        process = launcher.spawn(args, env=env, stdout=stdout)
    else:
        process = subprocess.Popen(args, cwd=BASE_DIR, env=env, stdout=stdout, stderr=subprocess.STDOUT if stdout is not None else None)
    started_processes.append(process)
    return process


def run_python(args: list[str], *, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(args, cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=…)`
    for `[sys.executable, "manage.py", …]` and the like, forked as `start_python` does."""
    launcher = forked_processes.launcher()
    if launcher is not None:
        return forked_processes.run(launcher, args, env=env, timeout=timeout)
    return subprocess.run(args, cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=timeout)


# Every hub the tests start, the benchmarks' included, is forked like that.
harness.default_spawn = start_python


LiveHub = HubProcess

# A hub's pool of two connections, a request waiting at most 1 s for one: of six requests
# at once that each held theirs through a 2 s wait on another service, four would fail.
TIGHT_POOL = {"MEMORYHUB_DB_POOL_MIN": "1", "MEMORYHUB_DB_POOL_MAX": "2", "MEMORYHUB_DB_POOL_TIMEOUT": "1"}


def post_at_once(hub: HubProcess, key: str, requests: list[tuple[str, dict | None]]) -> list[httpx.Response]:
    """Each (path, JSON body) posted to the hub at the same moment, as the agent holding `key`."""
    def post(request: tuple[str, dict | None]) -> httpx.Response:
        path, body = request
        return httpx.post(f"{hub.url}{path}", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30)

    with ThreadPoolExecutor(len(requests)) as pool:
        return list(pool.map(post, requests))


def busy_hub_connections() -> int:
    """Connections to the test database doing something (a hub's pool keeps the idle
    ones): what a waiting agent or an open stream must not hold."""
    import psycopg

    with psycopg.connect(harness.current_database_url(), autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'"
        ).fetchone()[0]
free_port = harness.free_port
stop_process = harness.stop_process
hub_database_url = harness.current_database_url


@pytest.fixture(scope="session")
def shared_hub(django_db_setup: None, django_db_blocker: Any) -> Iterator[LiveHub]:
    """One hub per test process, on the test database, started by the first test that
    asks for it and stopped at the end of the session (before the test database goes).
    Hubs are slow to start next to a test; most tests need nothing of a hub of their own."""
    with django_db_blocker.unblock():
        hub = start_hub()
    try:
        yield hub
    finally:
        hub.stop()


@pytest.fixture
def live_hub(transactional_db: None, shared_hub: LiveHub) -> Iterator[LiveHub]:
    """The test process's hub, for a test that needs it as it is: it serves one test after
    another (each with its own data: keys, workspaces and rows are new every test). A test
    that stops it, changes its settings or reads its log starts its own (`own_hub`)."""
    yield shared_hub
    # What the test set going in the hub (an indexer run, a summary) ends before the next
    # test's data arrives: the flush after this test would otherwise run beside it.
    poll(lambda: busy_hub_connections() == 0, timeout=10)


@pytest.fixture
def own_hub(transactional_db: None) -> Iterator[LiveHub]:
    """A hub of the test's own, stopped after it."""
    hub = start_hub()
    try:
        yield hub
    finally:
        hub.stop()


@pytest.fixture(scope="session")
def chromium() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.fail("Chromium is not installed: `apt-get install chromium` (make test's .ci/run does it).")
    # Playwright's sync API keeps an event loop on the test thread, which Django takes
    # for async code; the test's own ORM calls never run concurrently with it.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-quic",
            ],
        )
        yield browser
        browser.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def page(chromium: object) -> Iterator[object]:
    context = chromium.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


# A database number of its own, so tests never read or flush another Redis user's keys;
# one per pytest-xdist worker, so no worker's Celery takes the other's jobs.
REDIS_URL = os.environ.get("MEMORYHUB_TEST_REDIS_URL") or "redis://127.0.0.1:6379/{}".format(
    13 - int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
)

@pytest.fixture
def receiver(settings: Any) -> Iterator[Receiver]:
    """A webhook receiver on 127.0.0.1 (tests/webhook_receiver.py) that this process may send
    to, with the console's links at https://hub.example.com."""
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MEMORYHUB_PUBLIC_URL = "https://hub.example.com"
    with webhook_receiver() as receiver:
        yield receiver


@pytest.fixture
def redis_url() -> str:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.ConnectionError:
        pytest.fail(f"Redis is not reachable at {REDIS_URL}: .ci/run starts one; locally run `redis-server --daemonize yes`.")
    return REDIS_URL


@pytest.fixture
def worker(transactional_db: None, redis_url: str) -> Iterator[harness.ServerProcess]:
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": hub_database_url()}
    process = start_python(
        [sys.executable, "-m", "celery", "-A", "memoryhub", "worker", "--pool", "solo", "--loglevel", "WARNING", "--without-gossip", "--without-mingle"],
        env=env,
    )
    try:
        yield process
    finally:
        stop_process(process)


LONGEST_FIRST = {"test_no_page_runs_what_agents_wrote_and_every_page_fits"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Browser tests share one Chromium whose Playwright event loop lives on the test
    # thread until the session ends; async code in other tests (async_to_sync) cannot
    # run beside it, so the browser tests go last. The page walk, the longest test by
    # far, leads them: started last, it kept one test process busy long after the other
    # had run out of work.
    items.sort(key=lambda item: (item.get_closest_marker("browser") is not None, item.name not in LONGEST_FIRST))


def remember(key: str, content: str, **fields: object) -> dict:
    """POST /api/v1/memories as the agent holding `key`; the created entry."""
    response = api_client(key).post("/api/v1/memories", {"content": content, "user_id": "u1", **fields}, format="json")
    assert response.status_code in (200, 201), response.content[:500]
    return response.json()


def search(key: str, **body: object) -> list[dict]:
    response = api_client(key).post("/api/v1/memories/search", body, format="json")
    assert response.status_code == 200, response.content[:500]
    return response.json()["results"]


def processes_left(basetemp: Path) -> list[str]:
    """What the tests started that is still running once they have all ended: a process
    they started (hub, worker, agent), or one whose command line names a path under the
    run's temporary directory (an embedded PostgreSQL given a test's data dir). Killed,
    and named, so that the run fails once instead of every later run on the machine."""
    left = [f"{process.pid} {' '.join(getattr(process, 'args', []) or [])}" for process in started_processes if process.poll() is None]
    for process in started_processes:
        if process.poll() is None:
            stop_process(process)
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if str(basetemp) in command and int(proc.name) != os.getpid():
            left.append(f"{proc.name} {command}")
            with contextlib.suppress(OSError):
                os.kill(int(proc.name), signal.SIGKILL)
    return left


# How many hub processes the run started (each worker's count summed): what makes a run
# slow or fast more than any one test, reported at its end; and what outlived the tests.
def pytest_sessionfinish(session: pytest.Session) -> None:
    basetemp = session.config._tmp_path_factory.getbasetemp()
    left = processes_left(basetemp)
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["hubs_started"] = harness.hubs_started
        workeroutput["processes_left"] = left
    else:
        session.config._processes_left = getattr(session.config, "_processes_left", []) + left
    if getattr(session.config, "_processes_left", []) and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_testnodedown(node: Any, error: Any) -> None:
    config = node.config
    config._hubs_started = getattr(config, "_hubs_started", 0) + node.workeroutput.get("hubs_started", 0)
    config._processes_left = getattr(config, "_processes_left", []) + node.workeroutput.get("processes_left", [])


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    started = getattr(config, "_hubs_started", 0) + (harness.hubs_started if not hasattr(config, "workeroutput") else 0)
    terminalreporter.write_line(f"hub processes started: {started}")
    if left := getattr(config, "_processes_left", []):
        terminalreporter.write_line(f"FAILED: {len(left)} process(es) the tests started outlived them (killed now):", red=True)
        for line in left:
            terminalreporter.write_line(f"  {line[:300]}")
