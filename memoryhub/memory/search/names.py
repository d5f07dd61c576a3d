"""Following names: the entry a two-hop question needs is found through a name the best
results mention and the question does not."""

from __future__ import annotations

import re

from django.db.models import F, QuerySet

from memoryhub.core.selectors import Principal
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.search.candidates import Candidate, KeywordQuery, TsMatch, ranked_candidates
from memoryhub.memory.search.request import FOLLOWED_NAME_BONUS, FOLLOWED_RESULTS, SearchRequest
from memoryhub.memory.search.results import Hit
from memoryhub.memory.search.scoring import score_candidates

# A capitalised word that does not open a sentence: a name, most of the time.
_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][\w'-]+)")

_WORD = re.compile(r"[\w'-]+")

# Capitalised, yet not names to follow: dates are matched through their own words.
_NOT_NAMES = frozenset(
    "i january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)


def names_in_best(hits: list[Hit], *, request: SearchRequest) -> list[str]:
    """The names worth following from the best hits, if the request follows any."""
    if request.follow_names == "off" or not request.query or not hits:
        return []
    return names_to_follow(
        question=request.query, followed=[h.shown.content for h in hits[:FOLLOWED_RESULTS]], seen=[h.shown.content for h in hits]
    )


def lift_mentions(hits: list[Hit], *, names: list[str]) -> None:
    """Add FOLLOWED_NAME_BONUS to the hits after the best ones that mention one of
    `names`, then sort them again: following names among the rows already read."""
    mentions = _mentions(names)
    for hit in hits[FOLLOWED_RESULTS:]:
        if mentions.search(hit.shown.content):
            hit.score = min(1.0, hit.score + FOLLOWED_NAME_BONUS)
    hits.sort(key=lambda h: -h.score)


def followed_names(
    entries: QuerySet[MemoryEntry], results: list[Candidate], hits: list[Hit], *, names: list[str], request: SearchRequest,
    vector: list[float] | None, use_keyword: bool, pool: int, principal: Principal,
) -> list[Candidate]:
    """`results` with the entries that mention `names` (found in the best hits), each
    with FOLLOWED_NAME_BONUS added, sorted: following names among all the entries the
    search covers.

    The names' entries are ranked for the same question and with the same scores as the
    first round, routed as it was: exactly for a small set (a name narrows a user's
    entries to a few), through HNSW for a large one, where a common name could match
    too many entries to score them all."""
    mentioning = entries.filter(TsMatch(F("search_vector"), KeywordQuery(" ".join(names))))
    ranked = ranked_candidates(
        mentioning, vector=vector, query=request.query if use_keyword else None, pool=pool, match=request.keyword_match,
        principal=principal, filters=request.filters,
    )
    known = {c.pk for c in results}
    merged = results + [Candidate(pk, created.timestamp(), semantic, keyword) for pk, created, semantic, keyword in ranked if pk not in known]
    score_candidates(merged, request)
    followed = {h.candidate.pk for h in hits[:FOLLOWED_RESULTS]}
    mention = {row[0] for row in ranked} - followed
    for c in merged:
        if c.pk in mention:
            c.score = min(1.0, c.score + FOLLOWED_NAME_BONUS)
    merged.sort(key=lambda c: (-c.score, -c.created_at))
    return merged


def names_to_follow(*, question: str, followed: list[str], seen: list[str]) -> list[str]:
    """The names in `followed` (the best results' texts) worth following: not in the
    question, and in at most a quarter of `seen` (all the rows read; or two of them,
    for few): a name every entry has (the user's own, a speaker's) leads nowhere.

    Only the few names found are counted in `seen`: splitting every text into words to
    count them all cost more than the rest of following together."""
    asked = {w.lower() for w in _WORD.findall(question)}
    names: list[str] = []
    for text in followed:
        for name in _NAME.findall(text):
            low = name.lower()
            if low not in asked and low not in _NOT_NAMES and not low.startswith("i'") and name not in names:
                names.append(name)
    if not names:
        return []
    limit = max(len(seen) / 4, 2)
    kept = []
    for name in names:
        mentions = _mentions([name])
        if sum(1 for text in seen if mentions.search(text)) <= limit:
            kept.append(name)
    return kept


def _mentions(names: list[str]) -> re.Pattern[str]:
    return re.compile(r"(?<![\w'-])(?:" + "|".join(map(re.escape, names)) + r")(?![\w'-])", re.IGNORECASE)
