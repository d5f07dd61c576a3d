"""A small multi-hop set for search following the graph (`benchmarks/data/graph_chains.json`):
every question is answered by two memories linked by an entity, and names only the first
one's ("In which city is the company Louise Nakamura works for headquartered?": the fact
"Louise Nakamura works at Harbourlight", then the note "Harbourlight moved its headquarters
to Oslo last year.").

Each sample is one end user's notebook about the people and companies around them: 40
people, 20 companies, their cities, managers, spouses, instruments, dogs, and chit-chat.
Each fact is stored either as a fact (a factual memory, `subject predicate object`, as
`POST /graph/edges` writes it) or as a note saying the same in a sentence, half and half
by a seeded draw, so each question's two memories are fact+fact, fact+note, note+fact
or note+note: its category. The graph can only link facts, so it can help fact+fact
(and fact+note only to its first memory); the others are there to show it does not hurt.
Look-alikes abound: every company is headquartered somewhere, most people live somewhere,
so a question's words and meaning match twenty memories alike and only the link says
which one answers.

The layout is LoCoMo's, as our retrieval set's (`benchmarks/retrieval_set.py`), with a
turn's `fact` ({subject, predicate, object}) where it is stored as a fact; the last third
of the samples are "held-out". Drawn from one seeded generator:

    python -m benchmarks.chain_set
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

SEED = 20270115
SAMPLES = 12
HELD_OUT_FROM = 8
PEOPLE = 40
COMPANIES = 20
QUESTIONS_PER_KIND = 3
SESSIONS = 10
PATH = Path(__file__).resolve().parent / "data" / "graph_chains.json"

FIRST = [
    "Nadia", "Tomas", "Ines", "Viktor", "Lena", "Marco", "Yuki", "Anouk", "Pavel", "Sara", "Callum", "Beatriz", "Emil", "Freya",
    "Gustavo", "Hanna", "Idris", "Julia", "Karim", "Louise", "Mateus", "Nora", "Oskar", "Petra", "Quentin", "Rhea", "Stefan",
    "Talia", "Ugo", "Vera", "Wim", "Ximena", "Yusuf", "Zofia", "Adrian", "Bianca", "Cyril", "Daria", "Elias", "Fatima",
]
LAST = [
    "Brandt", "Okafor", "Lindqvist", "Moreau", "Castillo", "Novak", "Haddad", "Keller", "Ferreira", "Sato", "Quinn", "Albers",
    "Duarte", "Eriksen", "Fontaine", "Grieve", "Horvat", "Iqbal", "Janssen", "Kowalski", "Larsen", "Mendez", "Nakamura", "Oduya",
]
COMPANY_NAMES = [
    "Copperline", "Brightwave", "Halden Bank", "Greenleaf Foods", "Mosaic Health", "Quarry Labs", "Bluefin Media", "Tidewater Energy",
    "Lumen Studio", "Ashford Group", "Redkite Software", "Northstar Logistics", "Silverbirch", "Orchard Analytics", "Pinecrest Insurance",
    "Harbourlight", "Vantage Robotics", "Meridian Textiles", "Clearwater Labs", "Foxglove Design", "Ironbridge Capital", "Sablewood",
    "Kestrel Aviation", "Driftwood Games",
]
CITIES = [
    "Lisbon", "Denver", "Glasgow", "Toronto", "Melbourne", "Portland", "Valencia", "Austin", "Leeds", "Utrecht", "Seattle", "Porto",
    "Wellington", "Bristol", "Montreal", "Hamburg", "Kyoto", "Dublin", "Oslo", "Ghent", "Lyon", "Turin", "Krakow", "Tallinn",
]
INSTRUMENTS = ["cello", "violin", "flute", "saxophone", "trumpet", "piano", "clarinet", "drums", "harp", "bass guitar"]
BREEDS = ["beagle", "border collie", "dachshund", "golden retriever", "greyhound", "corgi", "labrador", "whippet", "poodle", "husky"]
DOGS = ["Pickles", "Biscuit", "Juniper", "Waffles", "Pepper", "Moose", "Clementine", "Bingo", "Noodle", "Ziggy", "Maple", "Otis",
        "Pretzel", "Socks", "Bramble", "Tofu"]

# Each relation: its predicate as a fact, and sentences saying the same as a note.
NOTES: dict[str, list[str]] = {
    "works at": ["{s} told me they have been with {o} for a couple of years now.", "Had lunch with {s}, who is on the {o} payroll these days."],
    "lives in": ["{s} just bought a flat in {o}.", "{s} says the trams in {o} are always late, it's where they live."],
    "headquartered in": ["{s} has its head office in {o}.", "{s} moved its headquarters to {o} last year."],
    "is run by": ["{s} is run by {o}, who founded it.", "Met {o} at the conference; {o} is the CEO of {s}."],
    "reports to": ["{s}'s manager is {o}.", "{s} said {o} signs off all of their expenses as their boss."],
    "is married to": ["{s} and {o} got married last summer.", "{s} brought their spouse {o} to the party."],
    "plays": ["{s} plays the {o} in an amateur orchestra.", "Heard {s} practising the {o} through the wall again."],
    "has a dog called": ["{s} adopted a dog called {o}.", "{s} walks {o}, their dog, every morning before work."],
    "is a": ["{s} is a {o}, full of energy.", "{s} turned out to be a {o} after all."],
}
FILLERS = [
    "Remember to renew the parking permit before the end of the month.", "The printer on the third floor is jammed again.",
    "Book a table for the team lunch on Friday.", "The quarterly report template changed, use the new one.",
    "Ask facilities about the broken blinds in the meeting room.", "Need to update my laptop before the security deadline.",
    "The coffee machine finally got fixed.", "Send the slides to the design review group by Thursday.",
    "Buy a birthday card for the office party.", "The train strike might delay everyone on Tuesday.",
    "Water the plants on the windowsill while the others are away.", "Try the new noodle place near the station.",
    "Check the expense policy for conference travel.", "The wifi in the west wing drops every afternoon.",
    "Order more sticky notes and whiteboard markers.", "The fire drill is scheduled for next Wednesday morning.",
]

# (kind, question, first relation, second relation): the question names the first fact's
# subject; the answer is the second fact's object, its subject the first fact's object.
QUESTIONS = [
    ("headquarters", "In which city is the company {p} works for headquartered?", "works at", "headquartered in"),
    ("boss of employer", "Who runs the company {p} works for?", "works at", "is run by"),
    ("manager's home", "Where does {p}'s manager live?", "reports to", "lives in"),
    ("spouse's instrument", "What instrument does {p}'s spouse play?", "is married to", "plays"),
    ("dog's breed", "What breed is {p}'s dog?", "has a dog called", "is a"),
]


def build_sample(rng: random.Random, index: int) -> dict[str, Any]:
    first, last = rng.sample(FIRST, len(FIRST)), rng.sample(LAST, len(LAST))
    people = [f"{first[i]} {last[i % len(last)]}" for i in range(PEOPLE)]
    bosses = [f"{first[-1 - i]} {last[-1 - i]}" for i in range(COMPANIES)]  # the companies' founders, not among the people
    companies = rng.sample(COMPANY_NAMES, COMPANIES)
    facts: list[tuple[str, str, str]] = []
    for company, boss in zip(companies, bosses, strict=True):
        facts.append((company, "headquartered in", rng.choice(CITIES)))
        facts.append((company, "is run by", boss))
    for person in people:
        facts.append((person, "works at", rng.choice(companies)))
        facts.append((person, "lives in", rng.choice(CITIES)))
    # Managers among the people (no one their own); a third of them married, pairwise; the
    # spouses and a few others play; a dog for a fifth of them.
    for person in people[: PEOPLE * 2 // 3]:
        facts.append((person, "reports to", rng.choice([p for p in people if p != person])))
    couples = rng.sample(people, PEOPLE // 3 // 2 * 2)
    for a, b in zip(couples[::2], couples[1::2], strict=True):
        facts.append((a, "is married to", b))
    for person in sorted(set(couples) | set(rng.sample(people, PEOPLE // 8))):  # sorted: a set's order changes from run to run
        facts.append((person, "plays", rng.choice(INSTRUMENTS)))
    dogs = rng.sample(DOGS, PEOPLE // 5)
    for person, dog in zip(rng.sample(people, len(dogs)), dogs, strict=True):
        facts.append((person, "has a dog called", dog))
        facts.append((dog, "is a", rng.choice(BREEDS)))
    facts.sort()  # the same order whatever sets iterated in
    # Each fact stored as a fact or as a note, half and half, in a session drawn at random.
    stored = {f: rng.random() < 0.5 for f in facts}
    sessions: list[list[dict[str, Any]]] = [[] for _ in range(SESSIONS)]
    turn_of: dict[tuple[str, str, str], dict[str, Any]] = {}
    user = f"user{index + 1:02d}"
    for s, p, o in facts:
        turn: dict[str, Any] = {"speaker": user}
        if stored[(s, p, o)]:
            turn["text"] = f"{s} {p} {o}"  # as POST /graph/edges writes a fact's content
            turn["fact"] = {"subject": s, "predicate": p, "object": o}
        else:
            turn["text"] = rng.choice(NOTES[p]).format(s=s, o=o)
        turn_of[(s, p, o)] = turn
        sessions[rng.randrange(SESSIONS)].append(turn)
    for session in sessions:
        session += [{"speaker": user, "text": text} for text in rng.sample(FILLERS, 4)]
        rng.shuffle(session)
    conversation: dict[str, Any] = {"speaker_a": user, "speaker_b": "Assistant"}
    date = datetime(2026, 3, 2, 9, 0) + timedelta(days=rng.randint(0, 60))
    for n, session in enumerate(sessions, start=1):
        for i, turn in enumerate(session, start=1):
            turn["dia_id"] = f"D{n}:{i}"
        conversation[f"session_{n}_date_time"] = f"{date:%-I:%M} {date:%p}".lower() + f" on {date.day} {date:%B}, {date.year}"
        conversation[f"session_{n}"] = session
        date += timedelta(days=rng.randint(3, 12), hours=rng.randint(-2, 2))

    qa = []
    split = "held-out" if index >= HELD_OUT_FROM else "tuning"
    for kind, question, first_rel, second_rel in QUESTIONS:
        firsts = [f for f in facts if f[1] == first_rel]
        # Only questions with one answer: the first fact's object has one fact of the second relation.
        answerable = []
        for f in firsts:
            seconds = [g for g in facts if g[1] == second_rel and g[0] == f[2]]
            if len(seconds) == 1 and sum(1 for g in firsts if g[0] == f[0]) == 1:
                answerable.append((f, seconds[0]))
        for f, g in rng.sample(answerable, min(QUESTIONS_PER_KIND, len(answerable))):
            category = f"{'fact' if stored[f] else 'note'}+{'fact' if stored[g] else 'note'}"
            qa.append({"question": question.format(p=f[0]), "answer": g[2], "evidence": [turn_of[f]["dia_id"], turn_of[g]["dia_id"]], "category": category,
                       "kind": kind, "split": split})
    return {"sample_id": f"chains-{index + 1:02d}", "conversation": conversation, "qa": qa}


def build() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    return [build_sample(rng, index) for index in range(SAMPLES)]


def main() -> None:
    samples = build()
    PATH.write_text(json.dumps(samples, indent=1, ensure_ascii=False) + "\n")
    questions = [q for s in samples for q in s["qa"]]
    turns = sum(len(v) for s in samples for k, v in s["conversation"].items() if k.startswith("session_") and not k.endswith("date_time"))
    categories = {c: sum(1 for q in questions if q["category"] == c) for c in sorted({q["category"] for q in questions})}
    print(f"{PATH}: {len(samples)} samples, {turns} turns, {len(questions)} questions {categories}")


if __name__ == "__main__":
    main()
