from __future__ import annotations

from celery import shared_task

from memoryhub.notifications.pump import deliveries_resume, deliveries_send, deliveries_sweep


@shared_task(name="memoryhub.notifications.tasks.deliver_webhooks", ignore_result=True)
def deliver_webhooks() -> int:
    """After a commit that queued deliveries: what is due is sent."""
    return deliveries_send()


@shared_task(name="memoryhub.notifications.tasks.resume_webhooks", ignore_result=True)
def resume_webhooks() -> int:
    """On the schedule: retries whose time came, and what a dead process held."""
    deliveries_resume()
    return deliveries_send()


@shared_task(name="memoryhub.notifications.tasks.sweep_deliveries", ignore_result=True)
def sweep_deliveries() -> int:
    return deliveries_sweep()
