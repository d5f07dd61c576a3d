from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings


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
