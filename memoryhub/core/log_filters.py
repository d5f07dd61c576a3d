"""Logging filters: what the logs must never hold."""

from __future__ import annotations

import logging


class PathOnly(logging.Filter):
    """Access-log lines keep the path and drop the query string: queries carry end
    users' ids (`?user_id=`), and a key someone put in a query (refused, but still a
    request) would otherwise sit in the log in clear."""

    def filter(self, record: logging.LogRecord) -> bool:
        # uvicorn's access record: (client, method, path with query, HTTP version, status).
        if isinstance(record.args, tuple) and len(record.args) == 5 and isinstance(record.args[2], str):
            client, method, full_path, version, status = record.args
            record.args = (client, method, full_path.split("?", 1)[0], version, status)
        return True
