"""Writes of the graph: an edge is a factual memory; rules are the workspace's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Forbidden
from memoryhub.core.models import Agent, Membership, Role
from memoryhub.core.selectors import operator_actor
from memoryhub.memory.models import MemoryType, PredicateKind, PredicateRule, Scope
from memoryhub.memory.services import MemoryInput, Source, Written, memory_write
from memoryhub.memory.typed_data import entity_folded

MAX_RULES = 200
MAX_PREDICATE = 200


def graph_edge_add(
    *, agent: Agent, subject: str, predicate: str, object: Any, user_id: str, confidence: float = 1.0,
    scope: str = Scope.AGENT, store: str | None = None, source: Source | None = None,
) -> Written:
    """`subject —predicate→ object` as the factual memory it is (so it is searched, reviewed,
    superseded, expired and purged like any other), its text the three said in a row."""
    item = MemoryInput(
        content=f"{subject} {predicate} {object}", user_id=user_id, scope=scope, store=store, memory_type=MemoryType.FACTUAL,
        data={"subject": subject, "predicate": predicate, "object": object, "confidence": confidence},
        source=source or Source(),
    )
    [written] = memory_write(agent=agent, items=[item])
    return written


@dataclass(frozen=True)
class RuleInput:
    predicate: str
    kind: str
    inverse: str = ""


def graph_rules_replace(*, membership: Membership, rules: list[RuleInput]) -> list[PredicateRule]:
    """The workspace's rules become `rules` (admins; audited). Predicates are folded as
    facts compare them. `multi` applies to facts written from now on: a fact already
    stored keeps the key it was written with (docs/graph.md, "Rules")."""
    if not membership.allows(Role.ADMIN):
        raise Forbidden("Graph rules need the admin role.")
    if len(rules) > MAX_RULES:
        raise ApplicationError(f"At most {MAX_RULES} rules.", code="VALIDATION_ERROR", details={"rules": [f"At most {MAX_RULES}."]})
    kept: dict[tuple[str, str], PredicateRule] = {}
    for n, rule in enumerate(rules):
        predicate, inverse = entity_folded(rule.predicate), entity_folded(rule.inverse)
        problem = None
        if rule.kind not in PredicateKind.values:
            problem = f"kind must be one of {', '.join(PredicateKind.values)}"
        elif not predicate or len(predicate) > MAX_PREDICATE:
            problem = f"predicate must be 1 to {MAX_PREDICATE} characters"
        elif (rule.kind == PredicateKind.INVERSE) != bool(inverse):
            problem = "inverse names the other predicate of an `inverse` rule, and only of one"
        elif len(inverse) > MAX_PREDICATE:
            problem = f"inverse must be at most {MAX_PREDICATE} characters"
        if problem:
            raise ApplicationError(f"rules[{n}]: {problem}.", code="VALIDATION_ERROR", details={f"rules[{n}]": [problem]})
        kept[(predicate, rule.kind)] = PredicateRule(
            workspace=membership.workspace, predicate=predicate, kind=rule.kind, inverse=inverse,
        )
    before = _described(PredicateRule.objects.filter(workspace=membership.workspace))
    with transaction.atomic():
        PredicateRule.objects.filter(workspace=membership.workspace).delete()
        PredicateRule.objects.bulk_create(kept.values())
        after = _described(kept.values())
        if before != after:
            audit_record(action="graph_rules_changed", actor=operator_actor(membership.user), workspace=membership.workspace,
                         details={"rules": {"from": before, "to": after}})
    return sorted(kept.values(), key=lambda r: (r.predicate, r.kind))


def _described(rules: Any) -> list[str]:
    return sorted(str(rule) for rule in rules)
