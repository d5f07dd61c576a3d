"""What runs around Django in the hub's ASGI process, composed by `memoryhub/asgi.py`:
the request threads Django's views run on, the body-size limit, the outage guard, the
long-poll and event-stream layers that hold connections without a thread, the relay
they share, and the error pages answered in the contract's envelope or as HTML.

It sits above the domain apps (the streams read the timeline) and below the front
ends, which use its error envelope and limits."""
