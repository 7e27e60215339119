"""A real `daimyo serve` server in a thread, for the web tests (uvicorn on a free port)."""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from engine.cli.web.app import create_app
from engine.cli.web.hub import Hub
from engine.cli.web.store import Store


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running(db: str, port: int | None = None, bot_delay: float = 0.0) -> Iterator[tuple[str, Hub]]:
    """Start a server on `db` (resuming its games); yields (base URL, hub); stops it after."""
    port = port or free_port()
    hub = Hub(Store(db), bot_delay=bot_delay)
    hub.resume()
    server = uvicorn.Server(uvicorn.Config(create_app(hub), host="127.0.0.1", port=port, log_level="error",
                                           ws_max_size=65536))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 15
    while not server.started:
        if time.time() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", hub
    finally:
        server.should_exit = True
        thread.join(10)
        hub.store.close()
