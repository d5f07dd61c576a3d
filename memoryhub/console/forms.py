from __future__ import annotations

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
