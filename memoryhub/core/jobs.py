"""The one shape of a background job the hub promised to run (a purge, an export, an
import): its status, progress, heartbeat, error and times, and how a job a crash left
behind is started again.

A 202 is a promise: the job's state is in its row, not in the process that runs it. A
job claims its row with a conditional update (queued → running, with a heartbeat) and
writes its heartbeat while it works; `jobs_resume`, run on a schedule, finds the jobs
whose work stopped (queued and never picked up, or running with a silent heartbeat) and
starts them again. Starting a job twice is harmless: only one claim of a row succeeds,
and a runner whose row was taken over finds its own conditional updates refused."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from memoryhub.core.tasking import dispatch


class JobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


ENDED = (JobStatus.DONE, JobStatus.FAILED)


class Job(models.Model):
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    # 0 to 1; never 1 until the job has ended and written its results.
    progress = models.FloatField(default=0.0)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Written while the job works (with its progress): a running job whose heartbeat is older
    # than MEMORYHUB_JOB_STALL_SECONDS has lost its runner. None while running: its runner
    # let go of it (a failed attempt that will be tried again).
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def ended(self) -> bool:
        return self.status in ENDED


def job_stall_cutoff() -> datetime:
    """A job silent since before this has lost its runner."""
    return timezone.now() - timedelta(seconds=settings.MEMORYHUB_JOB_STALL_SECONDS)


def stalled(cutoff: datetime) -> Q:
    """Running jobs whose runner is gone: silent since before `cutoff`, or let go of."""
    return Q(status=JobStatus.RUNNING) & (Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True))


def job_claim(*, jobs: QuerySet[Any], take_over_stalled: bool = False, **fields: Any) -> bool:
    """Takes the job (`jobs` narrowed to its row) for this runner if it is queued (or, with
    `take_over_stalled`, running under a runner that is gone): running, with a heartbeat,
    started now unless it started before; `fields` written with it. One claim succeeds."""
    now = timezone.now()
    claimable = Q(status=JobStatus.QUEUED)
    if take_over_stalled:
        claimable |= stalled(job_stall_cutoff())
    return bool(jobs.filter(claimable).update(
        status=JobStatus.RUNNING, heartbeat_at=now, started_at=Coalesce(F("started_at"), now), **fields,
    ))


def jobs_resume(*, jobs: QuerySet[Any], task: str) -> list[Any]:
    """Starts `task` again for each of `jobs` (the resumable ones of a kind) that a crash
    left behind: stalled ones are queued anew (a conditional update, so that a runner that
    was only slow finds its row taken), then every job queued for longer than the stall
    time is dispatched. Returns their ids."""
    cutoff = job_stall_cutoff()
    jobs.filter(stalled(cutoff)).update(status=JobStatus.QUEUED, heartbeat_at=None)
    ids = list(jobs.filter(status=JobStatus.QUEUED).filter(Q(created_at__lt=cutoff) | Q(started_at__isnull=False)).values_list("pk", flat=True))
    for pk in ids:
        dispatch(task, pk if isinstance(pk, int) else str(pk))
    return ids
