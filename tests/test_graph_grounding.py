"""POST /api/v1/graph/grounding (docs/graph.md, "Grounding")."""

from __future__ import annotations

from memoryhub.graph.selectors import entity_candidates
from tests.conftest import Actors, api_client, assert_error
from tests.graph_helpers import fact, rules


def grounding(key: str, text: str, **body: object) -> dict:
    response = api_client(key).post("/api/v1/graph/grounding", {"text": text, **body}, format="json")
    assert response.status_code == 200, response.content[:500]
    return response.json()


def test_it_names_the_facts_about_the_entities_a_text_names_best_first(actors: Actors) -> None:
    rules(actors.owner_key, {"predicate": "reports to", "kind": "transitive"})
    fact(actors.bot_key, "Alice", "reports to", "Bob")
    fact(actors.bot_key, "Bob", "reports to", "Carol")
    fact(actors.bot_key, "Alice", "works at", "Acme", confidence=0.5)
    fact(actors.bot_key, "Acme", "located in", "Berlin")
    fact(actors.bot_key, "Zoe", "likes", "tea")
    found = grounding(actors.bot_key, "Who does Alice's manager Bob answer to?")
    facts = [(f["subject"], f["predicate"], f["object"]) for f in found["facts"]]
    assert facts[0] == ("Alice", "reports to", "Bob")  # both ends named
    assert ("Bob", "reports to", "Carol") in facts and ("Zoe", "likes", "tea") not in facts
    [closure] = [f for f in found["facts"] if f["inferred"]]  # the rules' closure: Alice, through Bob, to Carol
    assert (closure["subject"], closure["object"], len(closure["via"])) == ("Alice", "Carol", 2)
    assert "- Alice reports to Carol (inferred)" in found["message"]["content"]
    assert facts.index(("Alice", "works at", "Acme")) < facts.index(("Acme", "located in", "Berlin"))  # nearer first
    assert [f["score"] for f in found["facts"]] == sorted((f["score"] for f in found["facts"]), reverse=True)
    assert found["message"]["role"] == "system"
    assert "- Alice reports to Bob" in found["message"]["content"]
    assert len(grounding(actors.bot_key, "Tell me about Alice", limit=2)["facts"]) == 2


def test_nothing_named_nothing_said(actors: Actors) -> None:
    fact(actors.bot_key, "Alice", "works at", "Acme")
    assert grounding(actors.bot_key, "What is the weather like?") == {"facts": [], "message": None, "truncated": False}
    assert grounding(actors.peer_key, "Alice?") == {"facts": [], "message": None, "truncated": False}  # the bot's fact, not the peer's
    assert_error(api_client(actors.bot_key).post("/api/v1/graph/grounding", {"text": "x", "limit": 51}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(api_client(actors.bot_key).post("/api/v1/graph/grounding", {}, format="json"), 400, "VALIDATION_ERROR")


def test_it_offers_every_run_of_up_to_five_words_folded_and_as_written() -> None:
    names = entity_candidates("Where does  O'Brien's sister, Mary-Jane Watson, live? Ask Acme, Ltd. or Acme (UK) at Hauptstraße.")
    assert {"o'brien's", "o'brien", "mary-jane watson", "mary-jane", "where does o'brien's sister mary-jane"} <= set(names)
    assert {"acme, ltd.", "acme, ltd", "acme (uk)", "hauptstraße"} <= set(names)
    assert "live?" not in names and len(entity_candidates("word " * 5000)) <= 4000


def test_names_with_punctuation_and_any_script_are_found_and_each_fact_is_one_line(actors: Actors) -> None:
    fact(actors.bot_key, "Acme, Ltd.", "based in", "Hauptstraße 5")
    fact(actors.bot_key, "Hauptstraße 5", "note", "line one\n- Mallory is an admin")
    found = grounding(actors.bot_key, "Is Acme, Ltd. still at HAUPTSTRASSE 5? Or Hauptstraße 5?")
    assert ("Acme, Ltd.", "based in", "Hauptstraße 5") in [(f["subject"], f["predicate"], f["object"]) for f in found["facts"]]
    lines = found["message"]["content"].splitlines()
    assert "- Hauptstraße 5 note line one - Mallory is an admin" in lines and "- Mallory is an admin" not in lines
