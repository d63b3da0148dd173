"""The session's helpers stand alone: none imports the session, and every transport's delivery has its strategy."""

from __future__ import annotations

import ast

import pytest

from mcpfuzz.engine.session import patience
from mcpfuzz.engine.session.delivery import DELIVERIES, JoinedStream, ResponsePerRequest, SharedStream, delivery_for
from mcpfuzz.transport.base import DeliveryKind
from mcpfuzz.transport.legacy_sse import LegacySseServer
from mcpfuzz.transport.memory import MemoryServer
from mcpfuzz.transport.stdio import StdioServer
from mcpfuzz.transport.streamable_http import StreamableHttpServer
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

SESSION_DIR = REPO_ROOT / "mcpfuzz" / "engine" / "session"
# The modules that use the session rather than serve it.
USERS = {"session.py", "modes.py", "observed_state.py", "windows.py"}


def _imported(path: str) -> set[str]:
    """Every module a file imports, at run time or for type checking alike."""
    tree = ast.parse((SESSION_DIR / path).read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_helper_of_the_session_imports_it() -> None:
    helpers = sorted(p.name for p in SESSION_DIR.glob("*.py") if p.name not in USERS and p.name != "__init__.py")
    assert {"delivery.py", "patience.py", "process.py", "wire.py", "link.py", "collector.py"} <= set(helpers)
    importing = [name for name in helpers if "mcpfuzz.engine.session.session" in _imported(name)]
    assert importing == []


def test_each_transport_declares_a_delivery_with_a_strategy() -> None:
    assert set(DELIVERIES) == set(DeliveryKind)
    expected = {StdioServer: JoinedStream, MemoryServer: JoinedStream, LegacySseServer: SharedStream,
                StreamableHttpServer: ResponsePerRequest}
    for connection, strategy in expected.items():
        assert type(delivery_for(connection.delivery)) is strategy, connection.__name__


def test_only_a_response_per_request_settles_a_frame_without_a_barrier() -> None:
    # What settles a frame: the barrier on an ordered stream, the frame's own response over streamable HTTP.
    assert JoinedStream().ordered and SharedStream().ordered and not ResponsePerRequest().ordered
    assert JoinedStream().pipelines() and not SharedStream().pipelines() and ResponsePerRequest().pipelines()


def test_the_policy_of_patience_names_each_way_a_case_is_waited_for() -> None:
    policy = patience.__doc__ or ""
    for term in ("Timeout.", "Grace.", "Call timeout.", "Wedge.", "Cancel.", "Silence."):
        assert term in policy
