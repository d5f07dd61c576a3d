"""ASGI entry point: `uvicorn memoryhub.asgi:application`.

Composition only; each layer lives in `memoryhub/serving/`. From the outside in: the
request body's guard (size, who, how long), the outage guard, the MCP mount (`/mcp`), the event streams, the approval
long polls, and Django on its request threads."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django  # noqa: E402

from memoryhub.serving.sync_handler import SyncRequestHandler  # noqa: E402

django.setup(set_prefix=False)

# A request thread coming back from the database waits for the interpreter lock until
# the thread holding it has run for the switch interval (5 ms by default). A search
# makes a dozen such round trips; next to a batch write (200 ms of validation and
# encoding per 500 entries) each one waited the whole 5 ms. At 0.5 ms, searches during a
# burst of 20,000 writes: p50 / p95 46-52 / 89-94 -> 40-46 / 69-83 ms over three pairs
# of runs, writes 1,580-1,690 -> 1,360-1,540 entries/s (docs: Benchmarks, "Search during a burst").
GIL_SWITCH_INTERVAL_SECONDS = 0.0005
sys.setswitchinterval(GIL_SWITCH_INTERVAL_SECONDS)
django_application = SyncRequestHandler()


from memoryhub.core import tasking  # noqa: E402
from memoryhub.serving.request_body import RequestBodyGuard  # noqa: E402
from memoryhub.serving.event_stream import EventStream  # noqa: E402
from memoryhub.serving.long_poll import ApprovalLongPoll  # noqa: E402
from memoryhub.serving.mcp_mount import LazyMcpMount  # noqa: E402
from memoryhub.serving.outages import OutageGuard  # noqa: E402

mcp_endpoint = LazyMcpMount(EventStream(ApprovalLongPoll(django_application)))
application = RequestBodyGuard(OutageGuard(mcp_endpoint))

# One process serves everything when REDIS_URL is unset: it also runs the periodic jobs.
tasking.start_scheduler()
