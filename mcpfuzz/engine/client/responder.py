"""The client side's answers to a server's own requests in the legacy era: ping, and elicitation, sampling and
roots when declared, each answered as the open case's `AnswerMode` says (valid by default)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from mcpfuzz.engine.client.capabilities import ALL_CAPABILITIES, METHOD_CAPABILITY, ClientCapability
from mcpfuzz.jsonrpc.client_check import AnswerMode
from mcpfuzz.jsonrpc.encode import error_response, response
from mcpfuzz.jsonrpc.expectation import METHOD_NOT_FOUND
from mcpfuzz.strategies.client_answers import client_answer

ROOT_FOLDERS = 2  # temporary folders listed by roots/list
MAX_ASKED = 100  # the latest requests of the server remembered, with how each was answered


@dataclass(frozen=True)
class Asked:
    """One request of the server and how it was answered (None: not at all)."""

    method: str
    mode: AnswerMode | None


class ClientResponder:
    """Answers one server's requests: what the declared capabilities cover as `mode` says, the rest -32601."""

    def __init__(self, declared: frozenset[ClientCapability] = ALL_CAPABILITIES) -> None:
        self.declared = declared
        self.mode = AnswerMode.ACCEPT
        self.asked: deque[Asked] = deque(maxlen=MAX_ASKED)
        base = Path(tempfile.gettempdir()) / f"mcpfuzz-roots-{getattr(os, 'getuid', lambda: 0)()}"
        self._folders = tuple(base / f"root-{index}" for index in range(1, ROOT_FOLDERS + 1))
        self._made = False

    def reply(self, message: dict) -> dict | None:
        """The answer object to one request (None: left unanswered on purpose)."""
        rid, method = message.get("id"), message.get("method")
        if method == "ping":
            return response(rid, {})
        capability = METHOD_CAPABILITY.get(method) if isinstance(method, str) else None
        if capability is None or capability not in self.declared:
            self.asked.append(Asked(str(method), None))
            return error_response(rid, METHOD_NOT_FOUND, "mcpfuzz does not serve this request")
        assert isinstance(method, str)
        self.asked.append(Asked(method, self.mode))
        answer = client_answer(method, message.get("params"), self.mode, self.roots())
        if answer.result is not None:
            return response(rid, answer.result)
        if answer.error is not None:
            return error_response(rid, *answer.error)
        return None

    def roots(self) -> tuple[str, ...]:
        """The `file://` URIs of the folders listed by roots/list: made on first use, under the system's temporary
        folder, at a path fixed per user so that the same seed sends the same answers."""
        if not self._made:
            for folder in self._folders:
                folder.mkdir(parents=True, exist_ok=True)
            self._made = True
        return tuple(folder.as_uri() for folder in self._folders)

    def close(self) -> None:
        """Remove the folders made for roots/list, when still empty (a server may have written to them)."""
        if self._made:
            for folder in (*self._folders, self._folders[0].parent):
                with contextlib.suppress(OSError):
                    folder.rmdir()
            self._made = False
