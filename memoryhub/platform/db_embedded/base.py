"""Database backend for the embedded server: PostgreSQL's, plus "start it on first use".

Starting the server lazily, when Django first opens a connection, means importing the
settings has no side effects, and commands that never touch the database (`check`,
`collectstatic`) don't start it.
"""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.backends.postgresql import base

from memoryhub.platform import embedded_pg


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        params["host"] = embedded_pg.ensure_running(Path(settings.MEMORYHUB_DATA_DIR))
        params.setdefault("user", "postgres")
        return params
