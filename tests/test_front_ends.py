"""What the front ends (the REST API, the MCP endpoint, the console's views) may do:
parse, call a service or a selector, render. A query built in a view is a read the
selectors do not know of, and escapes the rules they keep (visibility, tenancy)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import BASE_DIR

# QuerySet methods that build a query (not `values`: dicts have one too); a selector's
# answer may still be sliced or listed.
QUERY_BUILDERS = {
    "filter", "exclude", "annotate", "aggregate", "order_by", "values_list", "select_related", "prefetch_related", "extra", "raw",
}


def queries_built(path: Path, root: Path = BASE_DIR) -> list[str]:
    """Where the module at `path` builds a query: `file:line .method()` or `.objects`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in QUERY_BUILDERS:
            found.append((node.lineno, f".{node.func.attr}()"))
        elif isinstance(node, ast.Attribute) and node.attr == "objects":
            found.append((node.lineno, ".objects"))
    return [f"{path.relative_to(root)}:{line} {what}" for line, what in sorted(found)]


def test_the_front_ends_build_no_queries() -> None:
    modules = [*BASE_DIR.glob("agents_api/*.py"), *BASE_DIR.glob("agents_mcp/*.py"), *BASE_DIR.glob("console/*views.py")]
    assert len(modules) > 20
    assert [found for path in sorted(modules) for found in queries_built(path)] == []


def test_it_finds_a_query_built_in_a_view(tmp_path: Path) -> None:
    view = tmp_path / "views.py"
    view.write_text("def page(request):\n    return Session.objects.all()\n\n\ndef other(listed):\n    return listed.filter(x=1).first()\n")
    assert queries_built(view, tmp_path) == ["views.py:2 .objects", "views.py:6 .filter()"]
