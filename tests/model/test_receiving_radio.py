"""The receiving device's radio, by rows: a frame's row (core.frames charges_receiving_radio) says
whether it is charged, a pattern's row (core.patterns home_ends) whether the byte's other end is a
device (home_ends 2) or a server (home_ends 1, server_ends 1). A small case worked by hand through
the model's macros (sql/model/macros.sql receiving_radios, radio_kwh, receiving_radio_kwh)."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from pipelines.model.methods import frame_rows, pattern_rows
from pipelines.warehouse.tables import install_macros

#: 1 GB at a 5 MB/s link (200 s), a 1.74 W transmitting radio and a 0.3626 W receiving one.
CASE = {"bytes": 1e9, "mbps": 5.0, "tx_w": 1.74, "rx_w": 0.3626}
#: The radio energy (sender's + receiver's) of the case, worked by hand in joules: the sender's
#: radio 200 s x 1.74 W = 348 J; a receiving device's 200 s x 0.3626 W = 72.52 J.
SENDER_J = 200 * 1.74
RECEIVER_J = 200 * 0.3626
RADIO_SQL = ("select radio_kwh(p.radio_per_window, p.radio_per_byte, $bytes, $mbps, $tx_w, 1, 1, 1) "
             "+ receiving_radio_kwh(receiving_radios(f.charges_receiving_radio, p.home_ends), p.radio_per_byte, $bytes, $mbps, $rx_w) "
             "from frames as f, patterns as p where f.accounting_frame = $frame and p.name = $pattern")


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    """The model's macros over the shipped rows of core.frames and core.patterns."""
    con = duckdb.connect()
    install_macros(con)
    con.register("frames", frame_rows())
    con.register("patterns", pattern_rows())
    return con


def test_the_rows_say_who_is_charged() -> None:
    frames = dict(pl.from_arrow(frame_rows()).select("accounting_frame", "charges_receiving_radio").rows())
    assert frames == {"as_published": False, "attributional": True, "consequential": True}
    ends = {row["name"]: (row["home_ends"], row["server_ends"]) for row in pl.from_arrow(pattern_rows()).iter_rows(named=True)}
    # both ends devices, and one end a server
    assert ends["pipeline"] == ends["ring_allreduce"] == (2, 0)
    assert ends["idealized"] == ends["parameter_server"] == (1, 1)


@pytest.mark.parametrize("frame, pattern, joules", [
    # both ends devices: the sender's and the receiver's radio where the frame charges the receiver
    ("consequential", "pipeline", SENDER_J + RECEIVER_J),
    ("attributional", "ring_allreduce", SENDER_J + RECEIVER_J),
    # the paper's frame charges the sender alone
    ("as_published", "pipeline", SENDER_J),
    # one end a server: no device radio receives, in any frame
    ("consequential", "idealized", SENDER_J),
    ("attributional", "parameter_server", SENDER_J),
])
def test_the_radio_term_by_hand(con: duckdb.DuckDBPyConnection, frame: str, pattern: str, joules: float) -> None:
    kwh = con.execute(RADIO_SQL, {**CASE, "frame": frame, "pattern": pattern}).fetchone()[0]
    assert kwh == pytest.approx(joules / 3.6e6, rel=1e-12)


def test_no_receiver_is_charged_whatever_its_power(con: duckdb.DuckDBPyConnection) -> None:
    """A term weighed 0 is 0 whatever it is: a frame that does not charge the receiver needs no receive power."""
    kwh = con.execute(RADIO_SQL, {**CASE, "rx_w": None, "frame": "as_published", "pattern": "pipeline"}).fetchone()[0]
    assert kwh == pytest.approx(SENDER_J / 3.6e6, rel=1e-12)
    assert con.execute("select receiving_radio_kwh(1, 1, 1e9, 5, null)").fetchone()[0] is None
