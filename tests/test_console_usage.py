"""The console's Usage page, the overview's line for the month and the budget banner
(docs/usage.md, "In the console"), through Django's test client with usage made over the
API (the browser walk is test_browser_pages.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from console.charts import money
from memoryhub.core.models import AuditEntry
from memoryhub.usage.metering import flush
from memoryhub.usage.selectors import month_spent
from memoryhub.usage.models import Budget, UsageDaily
from tests.conftest import Actors, api_client, assert_error, remember

# The built-in model at one unit of money a token: every write costs what it reads.
PRICED = json.dumps({"local": {"input_per_million": 1_000_000}})
BANNER = 'data-testid="budget-banner"'
WARNING = "Model costs this month have reached the warning threshold"
SPENT = "The model budget for this month is spent"


@pytest.fixture
def priced() -> Iterator[None]:
    with override_settings(MEMORYHUB_PRICES=PRICED):
        yield


def logged_in(actors: Actors, who: str) -> Client:
    client = Client()
    client.force_login(getattr(actors, who).user)
    return client


def page(client: Client, path: str = "/usage/", **params: str) -> str:
    response = client.get(path, params)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def api_totals(key: str) -> dict:
    return api_client(key).get("/api/v1/usage").json()["totals"]


def rows(html: str, table: str) -> list[str]:
    """The first cell of each row of one of the page's tables."""
    body = html.split(f'data-testid="usage-by-{table}"', 1)[1].split("</table>", 1)[0]
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r'<th scope="row"[^>]*>(.*?)</th>', body)]


def test_it_is_in_the_sidebar_and_every_role_reads_it(actors: Actors) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.")
    teammate = logged_in(actors, "teammate")
    assert 'href="/usage/"' in page(teammate, "/")
    html = page(teammate)
    assert rows(html, "provider") == ["local"] and rows(html, "operation") == ["embed"] and rows(html, "agent") == ["bot"]
    assert 'data-testid="budget-form"' not in html and "Admins set the budget" in html
    assert 'data-testid="no-budget"' in html
    owner = page(logged_in(actors, "owner"))
    assert 'data-testid="budget-form"' in owner and 'name="monthly_limit"' in owner and 'name="warn_at"' in owner


def test_it_shows_costs_by_provider_operation_and_agent_and_a_chart_of_each_over_time(actors: Actors, priced: None) -> None:
    remember(actors.bot_key, "Ann flies.")
    remember(actors.peer_key, "Bo likes green tea in the morning before work.")
    remember(actors.peer_key, "Cy flies to Oslo on Friday with her two colleagues.")
    html = page(logged_in(actors, "teammate"))
    totals = api_totals(actors.owner_key)
    assert totals["cost"] > 0
    assert f'data-testid="total-cost">{money(Decimal(str(totals["cost"])))}<' in html
    assert f'data-testid="total-calls">{totals["calls"]}<' in html
    # The most costly first: peer wrote more.
    assert rows(html, "agent") == ["peer", "bot"]
    assert rows(html, "provider") == ["local"] and rows(html, "operation") == ["embed"]
    for chart in ("chart-usage-provider", "chart-usage-agent"):
        assert f'data-testid="{chart}"' in html
    assert "Cost per day, by provider" in html and "Cost per day, by agent" in html
    # The same days in calls, a link away (and an htmx swap of the report alone).
    calls = page(logged_in(actors, "teammate"), measure="calls")
    assert "Calls per day, by agent" in calls and 'aria-current="page">Calls<' in calls


def test_it_swaps_the_report_alone_for_htmx_and_shows_calls_when_nothing_cost_anything(actors: Actors) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.")
    client = logged_in(actors, "owner")
    html = page(client)
    assert 'data-testid="total-cost">$0.00<' in html
    assert "Calls per day, by provider" in html  # free models only: the charts count calls
    fragment = client.get("/usage/", {"measure": "cost"}, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<div id="report"') and "<html" not in fragment and 'id="budget"' not in fragment
    assert "Cost per day, by provider" in fragment


def test_it_reads_the_days_asked_for(actors: Actors) -> None:
    today = datetime.now(UTC).date()
    last_month = today.replace(day=1) - timedelta(days=1)
    with time_machine.travel(datetime(last_month.year, last_month.month, 15, 12, tzinfo=UTC)):
        remember(actors.bot_key, "Ann prefers the aisle seat.")
    client = logged_in(actors, "owner")
    this_month = page(client)
    assert 'data-testid="no-usage"' in this_month and "Last month" in this_month
    asked = page(client, **{"from": last_month.replace(day=1).isoformat(), "to": last_month.isoformat()})
    assert rows(asked, "agent") == ["bot"] and 'aria-current="page">Last month<' in asked
    assert f'value="{last_month.replace(day=1).isoformat()}"' in asked  # the form shows the days shown
    backwards = page(client, **{"from": today.isoformat(), "to": last_month.isoformat()})
    assert "The first day is after the last." in backwards and 'data-testid="no-usage"' in backwards
    too_long = page(client, **{"from": "2020-01-01", "to": today.isoformat()})
    assert "Choose at most 366 days." in too_long
    assert "Check the days" in page(client, **{"from": "not-a-day"})


def test_it_lets_admins_set_the_budget_and_not_viewers(actors: Actors) -> None:
    teammate, owner = logged_in(actors, "teammate"), logged_in(actors, "owner")
    assert teammate.post("/usage/budget/", {"monthly_limit": "50", "warn_at": "40"}).status_code == 403
    assert not Budget.objects.filter(workspace=actors.workspace).exists()
    assert owner.get("/usage/budget/").status_code == 405

    saved = owner.post("/usage/budget/", {"monthly_limit": "50", "warn_at": "40"})
    assert saved.status_code == 302 and saved["Location"] == "/usage/#budget"
    budget = Budget.objects.get(workspace=actors.workspace)
    assert (budget.monthly_limit, budget.warn_at, budget.updated_by) == (Decimal(50), Decimal(40), actors.owner.user)
    assert AuditEntry.objects.filter(workspace_id=actors.workspace.pk, action="budget_changed").count() == 1
    html = page(owner)
    assert "Budget saved" in html and 'data-testid="budget-meter"' in html and "$50.00" in html and "at $40.00" in html
    assert 'name="monthly_limit" value="50"' in html  # as typed, not 50.000000
    viewer = page(teammate)
    assert 'data-testid="budget-meter"' in viewer and "$50.00" in viewer and 'data-testid="budget-form"' not in viewer

    # A warning above the limit could never be seen; a negative budget is none.
    refused = owner.post("/usage/budget/", {"monthly_limit": "10", "warn_at": "20"})
    assert refused.status_code == 422 and "would never be given" in refused.content.decode()
    assert owner.post("/usage/budget/", {"monthly_limit": "-1", "warn_at": ""}).status_code == 422
    assert Budget.objects.get(workspace=actors.workspace).monthly_limit == 50

    # Empty fields lift both.
    assert owner.post("/usage/budget/", {"monthly_limit": "", "warn_at": ""}).status_code == 302
    assert Budget.objects.get(workspace=actors.workspace).monthly_limit is None
    assert 'data-testid="no-budget"' in page(owner)

    # An admin of another workspace sets that one's.
    assert logged_in(actors, "outsider").post("/usage/budget/", {"monthly_limit": "7", "warn_at": ""}).status_code == 302
    assert Budget.objects.get(workspace=actors.foreign_workspace).monthly_limit == 7
    assert Budget.objects.get(workspace=actors.workspace).monthly_limit is None


def test_it_needs_an_operator_of_a_workspace(actors: Actors) -> None:
    assert Client().get("/usage/").status_code == 302  # to the login page
    stranger = get_user_model().objects.create_user(username="stranger")
    client = Client()
    client.force_login(stranger)
    assert client.get("/usage/").status_code == 403
    assert client.post("/usage/budget/", {"monthly_limit": "5"}).status_code == 403
    assert logged_in(actors, "owner").get("/usage/nothing/").status_code == 404


def test_it_shows_a_banner_once_the_month_reaches_the_warning_and_says_when_the_limit_is_spent(actors: Actors, priced: None) -> None:
    owner, teammate = logged_in(actors, "owner"), logged_in(actors, "teammate")
    assert owner.post("/usage/budget/", {"monthly_limit": "1000", "warn_at": "1"}).status_code == 302
    assert BANNER not in page(owner, "/sessions/")  # nothing spent yet
    remember(actors.bot_key, "Ann prefers the aisle seat.")
    for client, path in ((owner, "/sessions/"), (teammate, "/memory/"), (teammate, "/"), (teammate, "/usage/")):
        html = page(client, path)
        assert BANNER in html and WARNING in html and SPENT not in html, path
        assert 'href="/usage/#budget"' in html
    assert BANNER not in page(logged_in(actors, "outsider"), "/")  # another workspace's month

    spent = month_spent(actors.workspace.pk)
    assert owner.post("/usage/budget/", {"monthly_limit": format(spent.normalize(), "f"), "warn_at": "1"}).status_code == 302
    html = page(teammate, "/episodes/")
    assert SPENT in html and "refused until the 1st (UTC) or a higher limit" in html and WARNING not in html
    assert f"({money(spent)} of {money(spent)})" in html
    # What the banner says is so.
    assert_error(api_client(actors.bot_key).post("/api/v1/memories", {"content": "Bo likes tea.", "user_id": "u1"}, format="json"),
                 429, "BUDGET_EXCEEDED")
    usage = page(teammate)
    assert "spent: priced calls are refused" in usage and "(100 %)" in usage

    assert owner.post("/usage/budget/", {"monthly_limit": "", "warn_at": ""}).status_code == 302
    assert BANNER not in page(teammate, "/")


def test_its_banner_costs_one_small_query_on_a_page_without_a_budget(actors: Actors, priced: None) -> None:
    client = logged_in(actors, "teammate")
    client.get("/sessions/")

    def usage_queries() -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            client.get("/sessions/")
        return [query["sql"] for query in captured if '"usage_' in query["sql"]]

    [budget_read] = usage_queries()
    assert '"usage_budget"' in budget_read
    Budget.objects.create(workspace=actors.workspace, monthly_limit=None, warn_at=None)  # a budget lifted: still one
    assert len(usage_queries()) == 1
    Budget.objects.filter(workspace=actors.workspace).update(warn_at=5)
    assert len(usage_queries()) == 2  # and the month's spending, where there is something to compare it with


def test_it_puts_the_month_on_the_overview(actors: Actors, priced: None) -> None:
    client = logged_in(actors, "teammate")
    html = page(client, "/")
    assert '<a href="/usage/">Model usage this month: $0.00 (0 calls)</a> <span class="muted">· no budget</span>' in html
    remember(actors.bot_key, "Ann prefers the aisle seat.")
    flush()  # the hub writes what it counted every few seconds; the overview reads what is written
    Budget.objects.create(workspace=actors.workspace, monthly_limit=Decimal(5000))
    spent = money(month_spent(actors.workspace.pk))
    assert f'<a href="/usage/">Model usage this month: {spent} of $5,000.00 budget (1 call)</a>' in page(client, "/")


def test_it_never_shows_another_workspaces_usage(actors: Actors, priced: None) -> None:
    remember(actors.spy_key, "Globex plans a merger.")
    remember(actors.bot_key, "Ann prefers the aisle seat.")
    Budget.objects.create(workspace=actors.foreign_workspace, monthly_limit=Decimal(1), warn_at=Decimal(0))
    owner = page(logged_in(actors, "owner"))
    assert rows(owner, "agent") == ["bot"] and "spy" not in owner
    assert f'data-testid="total-cost">{money(month_spent(actors.workspace.pk))}<' in owner
    assert BANNER not in owner and 'data-testid="no-budget"' in owner
    outsider = page(logged_in(actors, "outsider"))
    assert rows(outsider, "agent") == ["spy"] and "bot" not in rows(outsider, "agent")
    assert BANNER in outsider and SPENT in outsider


def test_it_writes_what_it_is_given_as_text(actors: Actors) -> None:
    # Provider names come from the hub's settings, agent names are slugs: neither is agent
    # text, but a table cell is escaped whatever it holds.
    today = datetime.now(UTC).date()
    UsageDaily.objects.create(workspace=actors.workspace, day=today, provider='<img src=x onerror="alert(1)">', operation="embed", calls=3,
                              cost=Decimal("0.0123"))
    html = page(logged_in(actors, "owner"))
    assert "<img src=x" not in html and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert rows(html, "agent") == ["no agent"] and "$0.0123" in html
    assert " style=" not in html and "<style" not in html  # the CSP allows style sheets only


def test_it_reads_the_page_in_a_bounded_number_of_queries(actors: Actors, django_assert_max_num_queries: object) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.")
    Budget.objects.create(workspace=actors.workspace, monthly_limit=Decimal(10), warn_at=Decimal(5), updated_by=actors.owner.user)
    client = logged_in(actors, "owner")
    client.get("/usage/")
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/usage/").status_code == 200
    few = len(captured)
    today = datetime.now(UTC).date()
    for day in range(today.day):
        for agent in (actors.bot, actors.peer, actors.loner, None):
            for provider in ("local", "api.openai.com", "llm.internal"):
                UsageDaily.objects.create(workspace=actors.workspace, day=today.replace(day=day + 1), agent=agent, provider=provider,
                                          operation="summarize", calls=2, cost=Decimal("0.5"))
    with django_assert_max_num_queries(few):  # type: ignore[operator]
        html = client.get("/usage/").content.decode()
    assert sorted(rows(html, "agent")) == ["bot", "loner", "no agent", "peer"] and len(rows(html, "provider")) == 3
