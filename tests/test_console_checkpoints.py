from __future__ import annotations

from django.test import Client

from tests.conftest import Actors, api_client


def seed(actors: Actors, key: str | None = None, session_id: str = "s1") -> None:
    client = api_client(key or actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": session_id, "user_id": "u1"}, format="json")
    url = f"/api/v1/sessions/{session_id}/checkpoints"
    client.post(url, {"expected_version": 0, "state": {"step": 1, "todo": ["book hotel"], "note": "<script>x</script>"}, "label": "start"}, format="json")
    client.post(url, {"expected_version": 1, "state": {"step": 2, "todo": ["book hotel", "pay"], "note": "<script>x</script>"}}, format="json")


def test_it_lists_checkpoints_on_the_session_page(actors: Actors, client: Client) -> None:
    seed(actors)
    client.force_login(actors.teammate.user)
    html = client.get("/sessions/s1/").content.decode()
    assert "/sessions/s1/checkpoints/1/" in html and "/sessions/s1/checkpoints/2/" in html and "start" in html


def test_it_shows_a_version_as_text(actors: Actors, client: Client) -> None:
    seed(actors)
    client.force_login(actors.teammate.user)
    html = client.get("/sessions/s1/checkpoints/1/").content.decode()
    assert "&quot;step&quot;: 1" in html and "&lt;script&gt;" in html and "<script>x" not in html


def test_it_diffs_two_versions(actors: Actors, client: Client) -> None:
    seed(actors)
    client.force_login(actors.teammate.user)
    html = client.get("/sessions/s1/checkpoints/diff/", {"a": 1, "b": 2}).content.decode()
    assert '<span class="diff-del">-  &quot;step&quot;: 1,</span>' in html
    assert '<span class="diff-add">+  &quot;step&quot;: 2,</span>' in html
    assert '<span class="diff-add">+    &quot;pay&quot;</span>' in html
    assert client.get("/sessions/s1/checkpoints/diff/", {"a": 1, "b": 9}).status_code == 404
    assert client.get("/sessions/s1/checkpoints/diff/", {"a": "x"}).status_code == 400


def test_it_hides_checkpoints_of_another_workspace(actors: Actors, client: Client) -> None:
    seed(actors, actors.spy_key, "globex")
    client.force_login(actors.owner.user)
    assert client.get("/sessions/globex/checkpoints/1/").status_code == 404
    assert client.get("/sessions/globex/checkpoints/diff/", {"a": 1, "b": 2}).status_code == 404


def test_it_draws_the_fork_tree(actors: Actors, client: Client) -> None:
    seed(actors)
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions/s1/fork", {"from_version": 1, "new_session_id": "s1-a"}, format="json")
    bot.post("/api/v1/sessions/s1-a/fork", {"from_version": 1, "new_session_id": "s1-a-x"}, format="json")
    bot.post("/api/v1/sessions/s1/branch", {"new_session_id": "s1-b"}, format="json")
    client.force_login(actors.teammate.user)
    html = client.get("/sessions/s1-a/family/").content.decode()
    tree = html[html.index('data-testid="fork-tree"'):]
    tree = tree[: tree.index("</section>")]
    # Root first, then its children in order, the grandchild nested under its parent.
    assert tree.index("s1</a>") < tree.index("s1-a</strong>") < tree.index("s1-a-x") and "s1-b" in tree
    assert tree.count('<ul class="tree">') == 3
