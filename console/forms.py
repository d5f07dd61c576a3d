from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from django import forms
from django.conf import settings

from memoryhub.core.models import USER_ID_MAX_LENGTH


class AgentKeyForm(forms.Form):
    agent = forms.SlugField(max_length=64, help_text="Created if it does not exist.")
    store = forms.SlugField(max_length=64, initial="default", help_text="The agent is attached to it; created if missing.")
    label = forms.CharField(max_length=200, required=False, help_text="Where this key is used, for you to recognise it.")
    expires_in_days = forms.IntegerField(
        min_value=1, max_value=settings.MEMORYHUB_KEY_MAX_DAYS, required=False,
        help_text=f"Leave empty for the longest a key may live ({settings.MEMORYHUB_KEY_MAX_DAYS} days).",
    )


class OperatorKeyForm(forms.Form):
    label = forms.CharField(max_length=200, required=False)
    expires_in_days = forms.IntegerField(min_value=1, max_value=settings.MEMORYHUB_KEY_MAX_DAYS, required=False)


class WorkspaceSwitchForm(forms.Form):
    workspace = forms.IntegerField()


class SessionFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=255, label="Session id or exact user id")
    agent = forms.ChoiceField(required=False)
    store = forms.ChoiceField(required=False)
    user_id = forms.CharField(required=False, max_length=255, label="User id")
    status = forms.ChoiceField(required=False)
    started_from = forms.DateField(required=False, label="Started from", widget=forms.DateInput(attrs={"type": "date"}))
    started_to = forms.DateField(required=False, label="Started until", widget=forms.DateInput(attrs={"type": "date"}))
    order = forms.ChoiceField(required=False, label="Sort by")

    def __init__(
        self, *args: Any, agents: list[str], stores: list[str], statuses: dict[str, str], orders: dict[str, str], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["agent"].choices = [("", "any agent"), *((a, a) for a in agents)]
        self.fields["store"].choices = [("", "any store"), *((s, s) for s in stores)]
        self.fields["status"].choices = [("", "any status"), *statuses.items()]
        self.fields["order"].choices = list(orders.items())


class ExportForm(forms.Form):
    """A workspace's or a session's export, from the Export & import page or a session's
    page (a user's export, the access request, is the Compliance page's)."""

    scope = forms.ChoiceField(choices=[("workspace", "The workspace"), ("session", "One session")])
    session_id = forms.CharField(max_length=255, required=False)
    with_vectors = forms.BooleanField(required=False, label="With embeddings (an import need not compute them again)")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("scope") == "session" and not data.get("session_id"):
            self.add_error("session_id", "A session's export names its session.")
        return data


# The kinds of file an import reads, as their makers call them, and the file an operator
# has in hand of each.
IMPORT_FORMAT_NAMES = {"memoryhub": "MemoryHub", "chatgpt": "ChatGPT", "claude": "Claude", "mem0": "Mem0"}
IMPORT_FORMATS = {
    "memoryhub": "MemoryHub archive (.zip)",
    "chatgpt": "ChatGPT export (conversations.json)",
    "claude": "Claude export (conversations.json)",
    "mem0": "Mem0 export (JSON)",
}


class ImportForm(forms.Form):
    file = forms.FileField(label="File", allow_empty_file=False)
    format = forms.ChoiceField(label="Format")
    store = forms.ChoiceField(label="Into store")
    agent = forms.ChoiceField(label="As agent", help_text="Memories and sessions are written as this agent's.")
    user_id = forms.CharField(
        max_length=USER_ID_MAX_LENGTH, required=False, strip=False, label="End user's user_id",
        help_text="Who the conversations are about (ChatGPT, Claude exports name nobody); for Mem0, the user of memories that name none.",
    )

    def __init__(self, *args: Any, formats: list[str], stores: list[str], agents: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = [(name, IMPORT_FORMATS.get(name, name)) for name in formats]
        self.fields["store"].choices = [(s, s) for s in stores]
        self.fields["agent"].choices = [(a, a) for a in agents]

    def clean_user_id(self) -> str:
        # Kept as typed (user_ids are matched exactly), but blanks are no user_id at all.
        value = self.cleaned_data["user_id"]
        if value and not value.strip():
            raise forms.ValidationError("Leave it empty, or enter the user_id exactly as your agents send it.")
        return value


# The longest range the Usage page draws a bar a day for.
USAGE_MAX_DAYS = 366


class UsageRangeForm(forms.Form):
    """The Usage page's days (UTC, inclusive), named `from` and `to` as GET /api/v1/usage
    names them; by default this month so far."""

    def __init__(self, *args: Any, today: date, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.today = today
        # `from` is a Python keyword: the fields are named here.
        self.fields["from"] = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
        self.fields["to"] = forms.DateField(required=False, label="To (inclusive)", widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        start, end = data.get("from") or self.today.replace(day=1), data.get("to") or self.today
        if start > end:
            raise forms.ValidationError("The first day is after the last.")
        if (end - start).days >= USAGE_MAX_DAYS:
            raise forms.ValidationError(f"Choose at most {USAGE_MAX_DAYS} days.")
        data["from"], data["to"] = start, end
        return data


class BudgetForm(forms.Form):
    """The workspace's monthly budget (admins); an empty field is none."""

    monthly_limit = forms.DecimalField(
        required=False, min_value=Decimal(0), max_digits=20, decimal_places=6, label="Monthly limit ($)",
        help_text="Priced calls are refused once the month's cost reaches it. Empty: no limit.",
    )
    warn_at = forms.DecimalField(
        required=False, min_value=Decimal(0), max_digits=20, decimal_places=6, label="Warn at ($)",
        help_text="A banner on every page, and an event on the feed, once the month's cost reaches it. Empty: no warning.",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        limit, warn_at = data.get("monthly_limit"), data.get("warn_at")
        # The API takes it, but it could never be seen: the limit stops the calls first.
        if limit is not None and warn_at is not None and warn_at > limit:
            self.add_error("warn_at", "A warning above the limit would never be given: set it at or below the limit.")
        return data


class NotificationsForm(forms.Form):
    email = forms.EmailField(max_length=254, help_text="Where the hub sends your emails.")
    events = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple, label="Email me when")

    def __init__(self, *args: Any, choices: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["events"].choices = choices


class WebhookForm(forms.Form):
    url = forms.CharField(max_length=2000, label="URL", help_text="https:// — a Slack incoming-webhook URL works with the Slack format.")
    events = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, label="Events")
    format = forms.ChoiceField(choices=[("standard", "Standard Webhooks (JSON, signed)"), ("slack", "Slack message")])
    include_content = forms.BooleanField(required=False, label="Include what a reviewer reads (args, context, memory content)")
    description = forms.CharField(max_length=500, required=False)

    def __init__(self, *args: Any, events: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["events"].choices = events
