"""Issue 22 item 6: the view's websocket refuses pages of other origins (any web page could
otherwise stream the robot's pose and pause the view) and serves its own page."""
from __future__ import annotations

import argparse

import pytest

from charmie_dynamics.view.cli import _server, origin_allowed

viser = pytest.importorskip("viser")
from websockets.exceptions import InvalidStatus  # noqa: E402 (viser's dependency)
from websockets.sync.client import connect  # noqa: E402


@pytest.fixture
def port():
    server = _server(argparse.Namespace(host="127.0.0.1", port=0))
    try:
        yield server.get_port()
    finally:
        server.stop()


def _open(port: int, origin: str | None) -> None:
    """Open the view's websocket as viser's page does and read its first message."""
    with connect(f"ws://127.0.0.1:{port}", origin=origin, open_timeout=10,
                 subprotocols=[f"viser-v{viser.__version__}"]) as ws:
        assert ws.recv(timeout=10)


def test_foreign_origin_is_refused_and_own_page_served(port):
    for origin in ("http://evil.example", f"http://evil.example:{port}",
                   f"http://127.0.0.1:{port + 1}", "null"):
        with pytest.raises(InvalidStatus, match="403"):
            _open(port, origin)
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}", None):
        _open(port, origin)


def test_origin_rule():
    assert origin_allowed("http://192.168.1.7:8080", "192.168.1.7:8080", 8080)  # --host 0.0.0.0
    assert not origin_allowed("http://192.168.1.9:8080", "192.168.1.7:8080", 8080)
    assert not origin_allowed("http://rebound.example:8080", "rebound.example:8080", 8080)
    assert not origin_allowed("https://localhost:8080", "localhost:8080", 8080)
    assert not origin_allowed("http://localhost:x", "localhost:8080", 8080)
