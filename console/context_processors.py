from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from django.http import HttpRequest

if TYPE_CHECKING:
    from memoryhub.usage.selectors import MonthBudget

# The console's sections. Pages whose issue has not landed yet are shown, not linked,
# so operators see what is coming without landing on an empty page.
NAVIGATION = [
    {"name": "Overview", "url_name": "console:home"},
    {"name": "Activity", "url_name": "console:activity"},
    {"name": "Sessions", "url_name": "console:sessions"},
    {"name": "Memory", "url_name": "console:memory"},
    {"name": "Graph", "url_name": "console:entity"},
    {"name": "Review", "url_name": "console:review", "count": "review"},
    {"name": "Episodes", "url_name": "console:episodes"},
    {"name": "Approvals", "url_name": "console:approvals"},
    {"name": "Compliance", "url_name": "console:compliance", "role": "compliance"},
    {"name": "Export & import", "url_name": "console:portability"},
    {"name": "Usage", "url_name": "console:usage"},
    {"name": "Notifications", "url_name": "console:notifications"},
    {"name": "Webhooks", "url_name": "console:webhooks", "role": "admin"},
    {"name": "Settings & keys", "url_name": "console:keys"},
]


def console(request: HttpRequest) -> dict[str, Any]:
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    from console.access import current_membership
    from memoryhub.core.selectors import memberships_for_user

    membership = getattr(request, "membership", None) or current_membership(request)

    def review_waiting() -> int:
        # Called by the template, so only pages that draw the sidebar count (not htmx
        # fragments such as the inbox's poll).
        from memoryhub.memory.selectors import review_waiting

        return review_waiting(workspace_id=membership.workspace_id) if membership is not None else 0

    @functools.cache
    def month_budget() -> MonthBudget | None:
        # The month against the budget, for the banner below and the overview's line: one small
        # query where no budget is set, read only by pages that draw the whole layout.
        from memoryhub.usage.selectors import month_budget as read

        return read(workspace_id=membership.workspace_id) if membership is not None else None

    def budget_alert() -> MonthBudget | None:
        # Every page's banner, once the month's cost reaches the warning or the limit.
        budget = month_budget()
        return budget if budget is not None and (budget.warning_reached or budget.limit_spent) else None

    return {
        "review_waiting": functools.cache(review_waiting),
        "month_budget": month_budget,
        "budget_alert": functools.cache(budget_alert),
        # Pages a role may not open are not offered.
        "navigation": [item for item in NAVIGATION if "role" not in item or (membership and membership.allows(item["role"]))],
        "current_membership": membership,
        "all_memberships": memberships_for_user(request.user),
    }
