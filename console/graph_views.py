"""The console's graph: an entity's facts, now or at a chosen time, drawn and listed."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.access import operator_required
from console.graph_figure import neighbourhood
from memoryhub.core.errors import ApplicationError
from memoryhub.core.selectors import principal_for_membership
from memoryhub.graph import selectors
from memoryhub.memory.typed_data import MAX_DATA_STRING

MAX_EDGES = 300


class EntityForm(forms.Form):
    name = forms.CharField(max_length=MAX_DATA_STRING, required=False, label="Entity", strip=True)
    at = forms.DateTimeField(
        required=False, label="As of", help_text="The facts valid then (blank: now)",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"],
    )
    depth = forms.TypedChoiceField(choices=[(1, "1 fact away"), (2, "2 facts away")], coerce=int, initial=1, required=False, label="Around it")
    user_id = forms.CharField(max_length=255, required=False, label="End user", help_text="Blank: every user's facts")


@require_GET
@operator_required()
def entity(request: HttpRequest) -> HttpResponse:
    """An entity's facts and the ones the rules infer (dashed, with the facts they follow
    from); without a name, where to start: the entities with the most facts."""
    principal = principal_for_membership(request.membership)
    form = EntityForm(request.GET or None)
    context: dict[str, object] = {"form": form, "rules": selectors.graph_rules(workspace_id=principal.workspace.pk)}
    name = form.cleaned_data["name"] if form.is_valid() else ""
    if not name:
        context["busiest"] = selectors.graph_entities_busiest(principal=principal)
        return render(request, "console/entity.html", context)
    edges: list[selectors.Edge] = []
    truncated = False
    try:
        walk = selectors.graph_neighbors(
            principal=principal, entity=name, depth=form.cleaned_data["depth"] or 1, user_id=form.cleaned_data["user_id"] or None,
            as_of=form.cleaned_data["at"], limit=MAX_EDGES + 1,
        )
        edges, truncated = walk.edges[:MAX_EDGES], walk.truncated or len(walk.edges) > MAX_EDGES
    except ApplicationError as wrong:
        form.add_error(None, wrong.message)
    context.update(name=name, edges=edges, figure=neighbourhood(name, edges) if edges else None, truncated=truncated)
    return render(request, "console/entity.html", context)
