"""lowered_priority (memoryhub/core/priority.py): bulk work yields the cores to requests."""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable

from memoryhub.core.priority import lowered_priority, thread_niceness

NOBODY = 65534


def on_a_thread_of_its_own(work: Callable[[], None]) -> None:
    # A thread of its own: the test runner's thread keeps its priority whatever happens.
    failures: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failures:
        raise failures[0]


def test_it_runs_the_block_at_the_niceness_and_puts_the_thread_back() -> None:
    def work() -> None:
        before = thread_niceness()
        with lowered_priority(15):
            assert thread_niceness() == 15
        assert thread_niceness() == before

    on_a_thread_of_its_own(work)


def test_it_puts_the_thread_back_when_the_block_fails() -> None:
    def work() -> None:
        before = thread_niceness()
        try:
            with lowered_priority(15):
                raise ValueError("the write failed")
        except ValueError:
            pass
        assert thread_niceness() == before

    on_a_thread_of_its_own(work)


def test_it_never_raises_a_threads_priority() -> None:
    def work() -> None:
        with lowered_priority(10):
            with lowered_priority(5):  # already lower than that: left as it is
                assert thread_niceness() == 10
            with lowered_priority(0):
                assert thread_niceness() == 10
            assert thread_niceness() == 10

    on_a_thread_of_its_own(work)


def test_it_leaves_other_threads_alone() -> None:
    inside = threading.Event()
    done = threading.Event()

    def work() -> None:
        with lowered_priority(15):
            inside.set()
            done.wait(10)

    thread = threading.Thread(target=work)
    thread.start()
    inside.wait(10)
    try:
        assert thread_niceness(thread.native_id) == 15
        assert thread_niceness() != 15
    finally:
        done.set()
        thread.join()


def test_it_leaves_the_thread_lowered_where_the_process_may_not_raise_it_back() -> None:
    # A process that is not root (nor CAP_SYS_NICE): a forked child that became `nobody`.
    assert os.geteuid() == 0, "the test suite runs as root (CI does); it becomes nobody here"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() beside the suite's threads
        child = os.fork()
    if child == 0:
        outcome = 1
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            with lowered_priority(15):
                pass
            outcome = 0 if thread_niceness() == 15 else 2
        finally:
            os._exit(outcome)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
