"""The one job shape (memoryhub/core/jobs.py): purges, exports and imports share their
status, heartbeat and times, and a job a crash left behind is started again by one rule
with one stall setting (MEMORYHUB_JOB_STALL_SECONDS), whichever kind it is."""

from __future__ import annotations

from datetime import timedelta

from django.test import override_settings
from django.utils import timezone

from memoryhub.compliance.models import PurgeRequest
from memoryhub.core.jobs import Job, JobStatus, job_claim, jobs_resume
from memoryhub.portability.models import Export, Import, ImportFormat
from memoryhub.portability.tasks import sweep_exports
from tests.conftest import Actors, poll, remember

STALL = 120


def _export(actors: Actors, **fields: object) -> Export:
    return Export.objects.create(
        workspace=actors.workspace, scope="workspace", requested_by="owner", expires_at=timezone.now() + timedelta(days=1), **fields,
    )


def test_purges_exports_and_imports_are_jobs_of_one_shape() -> None:
    for model in (PurgeRequest, Export, Import):
        assert issubclass(model, Job), model
        assert model._meta.get_field("status").choices == JobStatus.choices, model


@override_settings(MEMORYHUB_JOB_STALL_SECONDS=STALL)
def test_an_export_whose_runner_went_silent_is_run_again(actors: Actors, transactional_db: None) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann")
    silent = timezone.now() - timedelta(seconds=STALL + 30)
    # As if the process died mid-export (its heartbeat stopped), and one that is only busy.
    crashed = _export(actors, status=JobStatus.RUNNING, heartbeat_at=silent, started_at=silent, created_at=silent)
    busy = _export(actors, status=JobStatus.RUNNING, heartbeat_at=timezone.now(), started_at=silent, created_at=silent)
    sweep_exports()
    done = poll(lambda: Export.objects.filter(pk=crashed.pk, status=JobStatus.DONE).first())
    assert done is not None and done.counts["memories"] == 1
    assert done.started_at == silent  # the job's first start, kept across its runs
    busy.refresh_from_db()
    assert (busy.status, busy.progress) == (JobStatus.RUNNING, 0.0)


@override_settings(MEMORYHUB_JOB_STALL_SECONDS=STALL)
def test_a_job_queued_moments_ago_is_left_to_the_runner_it_was_given(actors: Actors, transactional_db: None) -> None:
    fresh = _export(actors)
    lost = _export(actors, created_at=timezone.now() - timedelta(seconds=STALL + 1))
    assert jobs_resume(jobs=Export.objects.filter(pk__in=[fresh.pk, lost.pk]), task="memoryhub.portability.tasks.run_export") == [lost.pk]
    assert poll(lambda: Export.objects.filter(pk=lost.pk, status=JobStatus.DONE).exists())
    fresh.refresh_from_db()
    assert fresh.status == JobStatus.QUEUED


@override_settings(MEMORYHUB_JOB_STALL_SECONDS=STALL)
def test_a_running_dry_run_import_is_not_started_twice(actors: Actors, transactional_db: None) -> None:
    silent = timezone.now() - timedelta(seconds=STALL + 30)
    trial = Import.objects.create(
        workspace=actors.workspace, store=actors.bot.stores.first(), agent=actors.bot, format=ImportFormat.MEMORYHUB, dry_run=True,
        requested_by="owner", status=JobStatus.RUNNING, heartbeat_at=silent, created_at=silent,
    )
    sweep_exports()
    trial.refresh_from_db()
    assert trial.status == JobStatus.RUNNING


def test_one_claim_of_a_job_succeeds(actors: Actors) -> None:
    export = _export(actors)
    assert job_claim(jobs=Export.objects.filter(pk=export.pk)) is True
    assert job_claim(jobs=Export.objects.filter(pk=export.pk)) is False
    export.refresh_from_db()
    assert export.status == JobStatus.RUNNING and export.started_at is not None and export.heartbeat_at is not None


@override_settings(MEMORYHUB_JOB_STALL_SECONDS=STALL)
def test_a_stalled_job_is_taken_over_only_where_its_kind_allows(actors: Actors) -> None:
    silent = timezone.now() - timedelta(seconds=STALL + 30)
    export = _export(actors, status=JobStatus.RUNNING, heartbeat_at=silent)
    assert job_claim(jobs=Export.objects.filter(pk=export.pk)) is False
    assert job_claim(jobs=Export.objects.filter(pk=export.pk), take_over_stalled=True) is True
    assert job_claim(jobs=Export.objects.filter(pk=export.pk), take_over_stalled=True) is False  # its heartbeat is fresh now
