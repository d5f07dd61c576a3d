"""Performance and quality benchmarks of the hub (`manage.py bench`): numbers, not
pass/fail. Each prints a table and, with --json, one JSON object, so that the
docs/benchmarks.md's figures can be reproduced and compared across machines. One module per
benchmark, listed in `registry`."""
