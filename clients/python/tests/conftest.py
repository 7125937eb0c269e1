from __future__ import annotations

from typing import Iterator

import pytest

from support import FakeClock, NodeProcess, ScriptedServer


@pytest.fixture(scope="session")
def scripted_server_process() -> Iterator[ScriptedServer]:
    process = NodeProcess("server.mjs")
    try:
        yield ScriptedServer(process.info["port"])
    finally:
        process.stop()


@pytest.fixture
def server(scripted_server_process: ScriptedServer) -> ScriptedServer:
    """The scripted server, with an empty script and record."""
    scripted_server_process.reset()
    return scripted_server_process


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
