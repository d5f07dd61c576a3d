"""Reads across the domain apps for the console's Overview: activity over time, memory,
tool usage, approvals waiting, removals and storage, all aggregated in SQL."""
