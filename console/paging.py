"""What a filtered, cursor-paged console list tells its template about the request."""

from __future__ import annotations

from django.http import HttpRequest


def filter_state(request: HttpRequest, *, not_filters: tuple[str, ...] = ()) -> dict[str, object]:
    """`filters`: the query string without the cursor, for the links to the first and
    next pages; `filtered`: whether any filter (not those in `not_filters`, such as the
    sort) narrows the list; `first_page`: whether no cursor was given."""
    filters = request.GET.copy()
    filters.pop("cursor", None)
    return {
        "filters": filters.urlencode(), "filtered": any(value for name, value in filters.items() if name not in not_filters),
        "first_page": not request.GET.get("cursor"),
    }
