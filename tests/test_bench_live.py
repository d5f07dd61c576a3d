"""`bench live` in small, on uvicorn: every event reaches its stream, and the report
says what streaming cost."""

from __future__ import annotations

from benchmarks.live import bench_live, report


def test_it_delivers_every_event_to_its_stream_and_reports_the_cost(transactional_db: None) -> None:
    lines: list[str] = []
    [result] = bench_live(streams=20, rate=10, seconds=2, servers=["uvicorn"], log=lines.append)
    assert not result.error, result.error
    assert result.streams_held == result.streams_opened == 20
    # Delivery, not speed, is this test's business: on a busy machine the sender managed
    # 10 events of the 20 that 2 s at 10/s ask for (speed is the benchmark's report).
    assert result.events_sent >= 5 and result.events_received == result.events_sent
    assert 0 < result.latency_ms["p50"] <= result.latency_ms["p95"] < 2000
    report([result], write=lines.append)
    assert any("20/20 streams held" in line for line in lines)
