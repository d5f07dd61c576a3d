"""The live hub the framework adapters' tests run against (`make test-adapters`).

`python -m tests.adapters_hub PYTHON [PYTEST ARGS…] [-- PYTHON [PYTEST ARGS…]]…` makes a
database of its own from the migrated template the suite uses, issues an admin key in two
workspaces (`acme` and the foreign `globex`), serves one hub on it, and runs
`PYTHON -m pytest PYTEST ARGS` for each group in turn, from clients/python, with the hub's
address and keys in the environment (MEMORYHUB_TEST_URL, MEMORYHUB_TEST_ADMIN_KEY,
MEMORYHUB_TEST_FOREIGN_ADMIN_KEY). The frameworks live in environments of their own
(`.venv-adapters*`), not the hub's: this process, in the hub's, is the bridge. Exits with
the first failing run's code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    import django

    django.setup()
    import psycopg
    from django.conf import settings
    from django.db import connections

    from benchmarks import harness
    from memoryhub.core import services
    from memoryhub.core.models import Role
    from tests.conftest import migrated_template

    runs = _groups(argv)
    if not runs:
        print(__doc__, file=sys.stderr)
        return 2
    template = migrated_template()
    server = harness.current_database_url().rsplit("/", 1)[0]
    name = f"test_adapters_{os.getpid()}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    connections.close_all()
    settings.DATABASES["default"]["NAME"] = name
    hub = None
    try:
        keys = {}
        for variable, slug in (("MEMORYHUB_TEST_ADMIN_KEY", "acme"), ("MEMORYHUB_TEST_FOREIGN_ADMIN_KEY", "globex")):
            workspace = services.workspace_get_or_create(slug=slug)
            membership = services.operator_get_or_create(username=f"{slug}-admin", workspace=workspace, role=Role.ADMIN)
            keys[variable] = services.operator_key_issue(membership=membership, label="adapter tests", actor="tests")[1]
        connections.close_all()
        started = time.monotonic()
        # The local model embeds on one thread, as in the suite's hubs (tests/conftest.py).
        log = BASE_DIR / "var" / "adapters-hub.log"
        log.parent.mkdir(exist_ok=True)
        log.unlink(missing_ok=True)
        hub = harness.start_hub(database_url=f"{server}/{name}", extra_env={"MEMORYHUB_EMBEDDINGS_THREADS": "1"}, log_file=log)
        print(f"adapters_hub: hub on {hub.url} in {time.monotonic() - started:.1f} s (its log: {log.relative_to(BASE_DIR)})", flush=True)
        env = {**os.environ, "MEMORYHUB_TEST_URL": hub.url, **keys}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        for python, *pytest_args in runs:
            # abspath, not resolve: a venv's python is a symlink that must stay one.
            command = [os.path.abspath(python), "-m", "pytest", *pytest_args]
            code = subprocess.run(command, cwd=BASE_DIR / "clients" / "python", env=env).returncode
            if code:
                print(f"adapters_hub: {command[0]} -m pytest failed; the hub's log is {log}", flush=True)
                return code
        return 0
    finally:
        if hub is not None:
            hub.stop()
        connections.close_all()
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _groups(argv: list[str]) -> list[list[str]]:
    groups: list[list[str]] = [[]]
    for arg in argv:
        if arg == "--":
            groups.append([])
        else:
            groups[-1].append(arg)
    return [group for group in groups if group]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
