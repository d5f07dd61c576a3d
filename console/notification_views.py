"""The console's Notifications pages: each operator's own emails, and (admins) the
workspace's webhooks with their delivery logs. Secrets are shown once, on the answer that
made them, never again."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from django_htmx.http import HttpResponseClientRedirect

from console.access import operator_required
from console.forms import NotificationsForm, WebhookForm
from memoryhub.core.errors import ApplicationError, NotFound
from memoryhub.core.models import Role
from memoryhub.notifications import selectors, services
from memoryhub.notifications.models import EMAIL_EVENTS, EVENTS, TEST_EVENT, WebhookEndpoint
from memoryhub.serving.http_errors import error_page

NOTIFICATIONS = "console/notifications.html"
WEBHOOKS = "console/webhooks.html"
WEBHOOK = "console/webhook.html"
DELIVERIES_PAGE = 25
# What `webhook.test` is for: any endpoint may be tested, none subscribes to it.
SUBSCRIBABLE = [(name, f"{name}: {about}") for name, about in EVENTS.items() if name != TEST_EVENT]


def _email_choices(request: HttpRequest) -> list[tuple[str, str]]:
    return [(event, EVENTS[event]) for event, role in EMAIL_EVENTS.items() if request.membership.allows(role)]


@require_http_methods(["GET", "POST"])
@operator_required()
def notifications(request: HttpRequest) -> HttpResponse:
    """The emails this operator gets from this workspace."""
    current = selectors.notification_setting_of(membership=request.membership)
    initial = {"email": current.email if current else request.user.email, "events": current.events if current else []}
    form = NotificationsForm(request.POST or None, initial=initial, choices=_email_choices(request))
    status = 200
    if request.method == "POST":
        if form.is_valid():
            services.notification_setting_set(membership=request.membership, email=form.cleaned_data["email"], events=form.cleaned_data["events"])
            messages.success(request, "Your email notifications are saved.")
            return HttpResponseRedirect(reverse("console:notifications"))
        status = 400
    context = {"form": form, "email_enabled": bool(settings.MEMORYHUB_EMAIL_URL), "can_choose": bool(form.fields["events"].choices)}
    return render(request, NOTIFICATIONS, context, status=status)


def _webhooks_context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    endpoints = selectors.webhooks_page(workspace=request.membership.workspace, cursor=None, limit=100).results
    return {"endpoints": endpoints, "form": extra.pop("form", None) or WebhookForm(events=SUBSCRIBABLE), "events": EVENTS, **extra}


@never_cache  # a new secret is shown once: no cache, proxy or back button keeps it
@require_http_methods(["GET", "POST"])
@operator_required(Role.ADMIN)
def webhooks(request: HttpRequest) -> HttpResponse:
    """The workspace's endpoints, and a form to add one (its secret shown on the answer)."""
    if request.method == "GET":
        return render(request, WEBHOOKS, _webhooks_context(request))
    form = WebhookForm(request.POST, events=SUBSCRIBABLE)
    if not form.is_valid():
        return render(request, WEBHOOKS, _webhooks_context(request, form=form), status=400)
    try:
        endpoint = services.webhook_create(membership=request.membership, item=services.EndpointInput(**form.cleaned_data))
    except ApplicationError as refused:
        form.add_error("url" if refused.code == "INVALID_WEBHOOK_URL" else "events", refused.message)
        return render(request, WEBHOOKS, _webhooks_context(request, form=form), status=400)
    return render(request, WEBHOOK, _webhook_context(request, endpoint, new_secret=endpoint.secret), status=201)


def _endpoint(request: HttpRequest, webhook_id: int) -> WebhookEndpoint:
    return selectors.webhook_get(workspace=request.membership.workspace, webhook_id=webhook_id)


def _webhook_context(request: HttpRequest, endpoint: WebhookEndpoint, **extra: Any) -> dict[str, Any]:
    page = selectors.deliveries_page(endpoint=endpoint, cursor=request.GET.get("cursor") or None, limit=DELIVERIES_PAGE)
    pending = any(delivery.delivery_status == "pending" for delivery in page.results)
    return {"endpoint": endpoint, "deliveries": page.results, "next": page.next, "pending": pending, "events": EVENTS, **extra}


@never_cache
@require_GET
@operator_required(Role.ADMIN)
def webhook(request: HttpRequest, webhook_id: int) -> HttpResponse:
    """One endpoint and its delivery log; the log refreshes itself while deliveries wait."""
    try:
        endpoint = _endpoint(request, webhook_id)
    except NotFound:
        return error_page(request, 404, "No such webhook in this workspace.")
    context = _webhook_context(request, endpoint)
    if request.htmx:
        return render(request, f"{WEBHOOK}#deliveries", context)
    return render(request, WEBHOOK, context)


@never_cache  # the rotated secret is shown once
@require_POST
@operator_required(Role.ADMIN)
def webhook_action(request: HttpRequest, webhook_id: int, action: str) -> HttpResponse:
    """test, rotate, enable, disable or delete; the answer is the endpoint's page (the log
    alone for htmx's test button)."""
    try:
        endpoint = _endpoint(request, webhook_id)
    except NotFound:
        return error_page(request, 404, "No such webhook in this workspace.")
    membership = request.membership
    if action == "delete":
        services.webhook_delete(membership=membership, endpoint=endpoint)
        messages.success(request, f"Webhook {webhook_id} deleted.")
        return HttpResponseClientRedirect(reverse("console:webhooks")) if request.htmx else HttpResponseRedirect(reverse("console:webhooks"))
    extra: dict[str, Any] = {}
    if action == "test":
        services.webhook_test(membership=membership, endpoint=endpoint)
        extra["note"] = "A webhook.test delivery is on its way."
    elif action == "rotate":
        endpoint = services.webhook_secret_rotate(membership=membership, endpoint=endpoint)
        extra["new_secret"] = endpoint.secret
    elif action in ("enable", "disable"):
        endpoint = services.webhook_update(membership=membership, endpoint=endpoint, changes={"enabled": action == "enable"})
    context = _webhook_context(request, endpoint, **extra)
    if request.htmx and action == "test":
        return render(request, f"{WEBHOOK}#deliveries", context)
    return render(request, WEBHOOK, context)


@require_POST
@operator_required(Role.ADMIN)
def delivery_redeliver(request: HttpRequest, webhook_id: int, delivery_id: int) -> HttpResponse:
    try:
        endpoint = _endpoint(request, webhook_id)
        delivery = selectors.delivery_get(endpoint=endpoint, delivery_id=delivery_id)
    except NotFound:
        return error_page(request, 404, "No such delivery of this webhook.")
    services.delivery_redeliver(membership=request.membership, delivery=delivery)
    context = _webhook_context(request, endpoint, note=f"Message {delivery.message_id} is sent again.")
    if request.htmx:
        return render(request, f"{WEBHOOK}#deliveries", context)
    return render(request, WEBHOOK, context)
