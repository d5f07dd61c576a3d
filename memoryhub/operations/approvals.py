"""Human approval: ask, read the decision."""

from __future__ import annotations

from typing import Any

from memoryhub.approvals.selectors import approval_get
from memoryhub.approvals.services import ApprovalInput, approval_request
from memoryhub.conversations.models import Session
from memoryhub.core.selectors import Principal
from memoryhub.operations import Made
from memoryhub.representations.approvals import approval_json


def approval_request_answer(*, principal: Principal, session: Session, item: ApprovalInput) -> Made:
    """The request: new and waiting for a person, or decided at once by a remembered rule (not new)."""
    approval, waits = approval_request(session=session, item=item)
    return Made(approval_json(approval), new=waits)


def approval_answer(*, principal: Principal, approval_id: int) -> dict[str, Any]:
    return approval_json(approval_get(principal=principal, approval_id=approval_id))
