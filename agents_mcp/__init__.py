"""The MCP front end: the hub's memory, sessions and approvals as tools over the Model
Context Protocol, served at `/mcp` (`memoryhub/serving/mcp_mount.py` mounts it on its
first request). A front end beside `agents_api` and `console`, independent of both."""
