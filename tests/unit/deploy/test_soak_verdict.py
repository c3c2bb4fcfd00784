"""The soak's verdict: p99 flat within 20 % first window to last, RSS growth under 10 %."""

from __future__ import annotations

from memmesh.bench.soak import Tally, Window, drift_pct, summarise

RATES = {"brief": 10.0, "ingest": 10.0}


def _window(brief_ms: float, ingest_ms: float) -> Window:
    window = Window()
    window.tallies["brief"] = Tally(due=100, latencies_ms=[brief_ms] * 100)
    window.tallies["ingest"] = Tally(due=100, latencies_ms=[ingest_ms] * 100)
    return window


def _rss(gateway_mb: int) -> dict[str, int]:
    return {"gateway": gateway_mb * 2**20, "ledger": 100 * 2**20}


def test_drift_is_the_change_in_percent_of_the_first() -> None:
    assert drift_pct(40.0, 50.0) == 25.0
    assert drift_pct(40.0, 30.0) == -25.0
    assert drift_pct(None, 30.0) is None


def test_flat_latency_and_memory_pass() -> None:
    summary = summarise(
        [_window(40, 60), _window(44, 55)], [_rss(100), _rss(109)], RATES, seconds=20
    )
    assert summary["pass"] is True
    assert summary["brief"]["p99_drift_pct"] == 10.0  # type: ignore[index]
    assert summary["rss_growth_pct"] == {"gateway": 9.0, "ledger": 0.0}
    assert summary["brief"]["sent"] == 200 and summary["brief"]["expected"] == 200  # type: ignore[index]


def test_p99_drift_beyond_20_percent_either_way_fails() -> None:
    rss = [_rss(100), _rss(100)]
    assert summarise([_window(40, 60), _window(49, 60)], rss, RATES, 20)["pass"] is False
    assert summarise([_window(40, 60), _window(40, 47)], rss, RATES, 20)["pass"] is False


def test_rss_growth_of_10_percent_fails() -> None:
    windows = [_window(40, 60), _window(40, 60)]
    assert summarise(windows, [_rss(100), _rss(110)], RATES, 20)["pass"] is False


def test_a_kind_with_no_answer_in_the_last_window_fails() -> None:
    last = _window(40, 60)
    last.tallies["ingest"] = Tally(due=100)
    last.tallies["ingest"].errors["DEADLINE_EXCEEDED"] = 100
    summary = summarise([_window(40, 60), last], [_rss(100), _rss(100)], RATES, 20)
    assert summary["pass"] is False
    assert summary["ingest"]["errors"] == {"DEADLINE_EXCEEDED": 100}  # type: ignore[index]
