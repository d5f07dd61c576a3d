"""An entity's neighbourhood drawn as SVG on the server: the entity in the middle, the
entities one fact away on a ring around it, two facts away on an outer ring; a line per
fact, dashed when the workspace's rules infer it. Like console/charts.py, this lays out
shapes (no JavaScript, no inline styles) and the template only draws them; the page's
table says the same in words."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from memoryhub.graph.selectors import Edge
from memoryhub.memory.typed_data import entity_folded

SIZE = 640  # the square viewBox
RINGS = {1: 170.0, 2: 285.0, 3: 285.0}  # depth 3 shares the outer ring
MAX_PER_RING = 24  # more would be unreadable: the table lists them all
LABEL_CHARS = 24
NODE_COLORS = {0: "#e15759", 1: "#4e79a7", 2: "#76b7b2", 3: "#76b7b2"}
STORED_COLOR, INFERRED_COLOR = "#667085", "#b07aa1"


def entity_key(name: Any) -> str:
    """As graph_entity() folds names (case, runs of space), for grouping what a page shows."""
    return entity_folded(name)


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


@dataclass(frozen=True)
class Node:
    key: str
    name: str
    x: float
    y: float
    r: float
    fill: str
    label_x: float
    label_y: float
    anchor: str
    center: bool

    @property
    def label(self) -> str:
        return _short(self.name)


@dataclass(frozen=True)
class Link:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    dashed: bool
    title: str  # hovered: the fact in words


@dataclass
class Neighbourhood:
    nodes: list[Node] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    hidden: int = 0  # entities left out of the drawing (in the table)
    size: int = SIZE

    @property
    def summary(self) -> str:
        shown = len(self.nodes) - 1
        return f"{shown} related entities, {len(self.links)} facts drawn" + (f"; {self.hidden} more in the table" if self.hidden else "")


def neighbourhood(entity: str, edges: list[Edge]) -> Neighbourhood:
    center_key = entity_key(entity)
    depth_of: dict[str, int] = {center_key: 0}
    names: dict[str, str] = {center_key: entity.strip()}
    for edge in sorted(edges, key=lambda e: e.depth):
        for name in (edge.subject, edge.object):
            key = entity_key(name)
            names.setdefault(key, str(name))
            if key == center_key:
                names[key] = str(name)  # as the facts write it
        near, far = (entity_key(edge.subject), entity_key(edge.object))
        for key in (near, far):
            if key not in depth_of:
                depth_of[key] = edge.depth
    figure = Neighbourhood()
    middle = SIZE / 2
    positions: dict[str, tuple[float, float]] = {center_key: (middle, middle)}
    figure.nodes.append(Node(center_key, names[center_key], middle, middle, 14, NODE_COLORS[0], middle, middle + 32, "middle", True))
    for depth in (1, 2, 3):
        ring = [key for key, d in depth_of.items() if d == depth]
        shown, figure.hidden = ring[:MAX_PER_RING], figure.hidden + max(0, len(ring) - MAX_PER_RING)
        radius = RINGS[depth]
        # Each ring turned a little, so that outer labels fall between inner ones.
        offset = -math.pi / 2 + (math.pi / max(len(shown), 1)) * (depth - 1)
        for n, key in enumerate(shown):
            angle = offset + 2 * math.pi * n / len(shown)
            x, y = middle + radius * math.cos(angle), middle + radius * math.sin(angle)
            positions[key] = (x, y)
            right = math.cos(angle) >= 0
            figure.nodes.append(Node(
                key, names[key], round(x, 1), round(y, 1), 8 if depth == 1 else 6, NODE_COLORS[depth],
                round(x + (12 if right else -12), 1), round(y + 4, 1), "start" if right else "end", False,
            ))
    seen: set[tuple[str, str, str]] = set()
    for edge in edges:
        a, b = entity_key(edge.subject), entity_key(edge.object)
        if a not in positions or b not in positions or (a, b, edge.predicate) in seen:
            continue
        seen.add((a, b, edge.predicate))
        (x1, y1), (x2, y2) = positions[a], positions[b]
        words = f"{edge.subject} {edge.predicate} {edge.object}" + (" (inferred)" if edge.inferred else "")
        figure.links.append(Link(round(x1, 1), round(y1, 1), round(x2, 1), round(y2, 1),
                                 INFERRED_COLOR if edge.inferred else STORED_COLOR, edge.inferred, words))
    return figure
