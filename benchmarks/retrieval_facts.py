"""The facts our retrieval set's turns state (benchmarks/retrieval_set.py), read by fixed
patterns, no model: what an agent's fact extractor would store beside each turn, for
`bench memory-quality --facts` to measure search following the graph on the same set.

Every user turn of the set is read the same way, evidence or not: the patterns are those
of the sentences the generator writes about the user (a dog, jobs, homes, a sister, a
trip, a book, cars, a race…), about the people around them (look-alike facts: a
coworker's dog, a friend's allergy, someone's new car) and the chit-chat that names
someone (brunch with Hugo). "I" is the speaker; a fact's subject and object are names as
the turn writes them. It is a perfect extractor for these sentences, so the graph's
numbers here are an upper bound of what an extractor that misses or garbles facts would
give; chit-chat without a fact yields nothing, as an extractor would."""

from __future__ import annotations

import re
from collections.abc import Callable

Fact = tuple[str, str, str]

# Predicates whose objects stand side by side (the workspace's `multi` rules): a user has
# many friends; without the rule the second would supersede the first.
MULTI_PREDICATES = (
    "friend", "coworker", "had brunch with", "pottery class with", "sends memes to", "lent", "ran", "job offer from", "plays",
)

_A = r"(?:a|an)"


def _rules() -> list[tuple[re.Pattern[str], Callable[[str, re.Match[str]], list[Fact]]]]:
    def rule(pattern: str) -> Callable[[Callable[[str, re.Match[str]], list[Fact]]], None]:
        def add(facts: Callable[[str, re.Match[str]], list[Fact]]) -> None:
            rules.append((re.compile(pattern), facts))
        return add

    rules: list[tuple[re.Pattern[str], Callable[[str, re.Match[str]], list[Fact]]]] = []
    rule(rf"^We finally adopted {_A} (?P<breed>.+?) from the (?P<shelter>.+?) shelter yesterday, we're calling him (?P<pet>[\w-]+)!")(
        lambda u, m: [(u, "has a dog called", m["pet"]), (m["pet"], "is a", m["breed"]), (m["pet"], "adopted from", f"{m['shelter']} shelter")])
    rule(r"^(?P<pet>[\w-]+) pulled so hard on the lead this morning that I nearly fell into a hedge")(
        lambda u, m: [(m["pet"], "nearly pulled into a hedge", u)])
    rule(rf"^I've been working as {_A} (?P<role>.+?) at (?P<company>.+?) for about three years now")(
        lambda u, m: [(u, "works as", m["role"]), (u, "works at", m["company"])])
    rule(rf"^Big news: I handed in my notice at (?P<old>.+?)\. I start as {_A} (?P<role>.+?) at (?P<new>.+?) next month")(
        lambda u, m: [(u, "left a job at", m["old"]), (u, "works as", m["role"]), (u, "works at", m["new"])])
    rule(r"^We've lived in (?P<city>.+?) since the kids were little")(lambda u, m: [(u, "lives in", m["city"])])
    rule(r"we're relocating to (?P<city>.+?) for my partner's new position")(
        lambda u, m: [(u, "lives in", m["city"]), (u, "moved for", "partner's new position")])
    rule(r"^My sister (?P<sister>[\w-]+) lives in (?P<city>.+?); she teaches (?P<subject>.+?) at a secondary school there")(
        lambda u, m: [(u, "has a sister", m["sister"]), (m["sister"], "lives in", m["city"]), (m["sister"], "teaches", m["subject"])])
    rule(r"^I'm booking flights to go see (?P<who>[\w-]+) in (?P<month>\w+)")(
        lambda u, m: [(u, "is flying to see", m["who"]), (u, "is travelling in", m["month"])])
    rule(r"^Ever since I was a kid I can't go near (?P<allergen>.+?), my throat swells")(lambda u, m: [(u, "is allergic to", m["allergen"])])
    rule(r"^I practise the (?P<instrument>.+?) every evening")(lambda u, m: [(u, "plays", m["instrument"])])
    rule(r"^I stopped eating meat")(lambda u, m: [(u, "stopped eating", "meat")])
    rule(r"^Planes give me panic attacks, so we take the train everywhere")(
        lambda u, m: [(u, "is afraid of", "planes"), (u, "travels by", "train")])
    rule(r"^I ran the (?P<race>.+?) on Sunday and finished in (?P<time>\S+),")(
        lambda u, m: [(u, "ran", m["race"]), (u, f"finished the {m['race']} in", m["time"])])
    rule(r"^My (?P<relative>[\w ]+?)'s wedding is on (?P<day>\d+ \w+)")(
        lambda u, m: [(f"{u}'s {m['relative']}", "is getting married on", m["day"])])
    rule(r"^My friend (?P<friend>[\w-]+) keeps telling me I have to read (?P<book>.+?)\.$")(
        lambda u, m: [(u, "friend", m["friend"]), (m["friend"], "recommends the book", m["book"])])
    rule(r"^Finished (?P<book>.+?) last night")(lambda u, m: [(u, "finished reading", m["book"])])
    rule(r"^My old (?P<car>.+?) failed its inspection again")(lambda u, m: [(u, "drives", m["car"]), (m["car"], "failed", "its inspection")])
    rule(rf"^We traded in the (?P<old>.+?) and now drive {_A} (?P<new>.+?)\.$")(
        lambda u, m: [(u, "drives", m["new"]), (u, "traded in", m["old"])])
    rule(r"^I signed up for a half marathon in the autumn")(lambda u, m: [(u, "is training for", "a half marathon")])
    rule(r"^My knee gave out, the physio says no running for months, so it's (?P<sport>.+?) at (?P<place>.+?) for me now")(
        lambda u, m: [(u, "injured", "knee"), (u, "gave up", "running"), (u, "does", m["sport"])])
    # About the people around the user: the set's look-alikes.
    rule(rf"^My coworker (?P<other>[\w-]+) just adopted {_A} (?P<breed>.+?) called (?P<pet>[\w-]+)\.")(
        lambda u, m: [(u, "coworker", m["other"]), (m["other"], "has a dog called", m["pet"]), (m["pet"], "is a", m["breed"])])
    rule(r"^(?P<other>[\w-]+) is thinking of moving to (?P<city>.+?) next year")(lambda u, m: [(m["other"], "may move to", m["city"])])
    rule(rf"^(?P<other>[\w-]+) got a job offer from (?P<company>.+?) as {_A} (?P<role>.+?)\.$")(
        lambda u, m: [(m["other"], "job offer from", m["company"])])
    rule(r"^(?P<other>[\w-]+) ran the (?P<race>.+?) and hated every minute")(lambda u, m: [(m["other"], "ran", m["race"])])
    rule(r"^(?P<other>[\w-]+) lent me (?P<book>.+?) but I haven't opened it")(lambda u, m: [(m["other"], "lent", m["book"])])
    rule(rf"^(?P<other>[\w-]+) bought {_A} (?P<car>.+?) and won't stop talking about it")(lambda u, m: [(m["other"], "drives", m["car"])])
    rule(r"^My friend (?P<other>[\w-]+) is allergic to (?P<allergen>.+?) too")(
        lambda u, m: [(u, "friend", m["other"]), (m["other"], "is allergic to", m["allergen"])])
    rule(r"^(?P<other>[\w-]+) plays the (?P<instrument>.+?) in a local band")(lambda u, m: [(m["other"], "plays", m["instrument"])])
    # Chit-chat that names someone, or says something about the user.
    rule(r"^(?P<other>[\w-]+) and I went for brunch on")(lambda u, m: [(u, "had brunch with", m["other"])])
    rule(r"^(?P<other>[\w-]+) keeps sending me memes")(lambda u, m: [(m["other"], "sends memes to", u)])
    rule(r"^I went to a pottery class with (?P<other>[\w-]+),")(lambda u, m: [(u, "pottery class with", m["other"])])
    rule(r"^I've been binge-watching (?P<show>.+?) and I'm way too invested")(lambda u, m: [(u, "is watching", m["show"])])
    rule(r"^I'm thinking about learning a bit of (?P<language>\w+)")(lambda u, m: [(u, "wants to learn", m["language"])])
    rule(r"dinner\? I was thinking (?P<dish>.+?)\.$")(lambda u, m: [(u, "may cook", m["dish"])])
    rule(r"^Thinking about repainting the living room, maybe (?P<colour>.+?)\.$")(
        lambda u, m: [(u, "may repaint the living room", m["colour"])])
    return rules


RULES = _rules()


def facts_of(speaker: str, text: str) -> list[Fact]:
    """The facts one turn states, its speaker as "I"; none for the assistant's turns."""
    if speaker == "Assistant":
        return []
    return [fact for pattern, facts in RULES if (m := pattern.search(text)) for fact in facts(speaker, m)]
