"""The production descendants' reproductions (issue 32): guest-haltpoll runs its three pollers,
guest polling removes most HLT exits where KVM's polling keeps them, each poller's CPU is
reported apart, and the published value sits beside its row."""

import pytest

reproduce = pytest.importorskip("eventpath.reproduce")


def _rows(rows):
    return {(r.config, r.metric): r for r in rows}


def test_guest_haltpoll_rows_and_published_value():
    exp = reproduce.EXPERIMENTS["guest-haltpoll"]
    rows = _rows(exp.compare(0.05, lambda _s: None))
    hlt = {c: rows[(c, "exits_hlt")].simulated for c in ("no-poll", "host-poll", "guest-poll")}
    assert hlt["guest-poll"] < 0.6 * hlt["host-poll"], hlt
    assert hlt["host-poll"] > 0.8 * hlt["no-poll"], hlt
    assert rows[("host-poll", "host_poll")].simulated > 10
    assert rows[("host-poll", "guest_poll")].simulated is None
    assert rows[("guest-poll", "guest_poll")].simulated > 10
    assert rows[("guest-poll", "host_poll")].simulated is None
    assert rows[("guest-poll", "vs_host_poll")].published == pytest.approx(102.0)
    assert rows[("guest-poll", "vs_host_poll")].simulated > 99.0
