"""A drawn frame before its ids are handed out: ordered members, batches, byte edits; built into a Case."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

from mcpfuzz.strategies.frames.context import FrameContext
from mcpfuzz.strategies.frames.expect import expect_frame

from mcpfuzz.jsonrpc.encode import dumps
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.json_value import Json

FRAMES_FAMILY = "frames"


class Fresh(enum.Enum):
    """A placeholder for an id handed out when the frame is sent: ids are unique per session (MCP
    basic/index), and Hypothesis replays a draw many times while it shrinks."""

    FRESH = "fresh"

    def __repr__(self) -> str:
        return "<fresh id>"


FRESH: Final = Fresh.FRESH
# A member's value is JSON, or the fresh id to come; a member left out is not among them (never Absent).
Members = tuple[tuple[str, Json | Fresh], ...]


@dataclass(frozen=True)
class Message:
    """A JSON object as ordered members; a key may repeat (the wire allows it, a dict does not)."""

    members: Members

    def get(self, key: str, default: Any = None) -> Any:
        """The last value given for `key` (what most readers keep)."""
        found = [value for name, value in self.members if name == key]
        return found[-1] if found else default

    def encode(self, fresh: Callable[[], int]) -> tuple[bytes, tuple[Any, ...]]:
        """The object's bytes, and the ids it carries (one fresh id, shared by every FRESH member)."""
        rid: list[int] = []

        def value_of(value: Json | Fresh) -> Json:
            if value is not FRESH:
                return value
            if not rid:
                rid.append(fresh())
            return rid[0]

        parts = [dumps(name) + b":" + dumps(value_of(value)) for name, value in self.members]
        ids = (rid[0],) if rid else tuple(value for name, value in self.members if name == "id" and value is not None)
        return b"{" + b",".join(parts) + b"}", ids


class ByteEdit(Protocol):
    """A byte-level change of an encoded frame; `again` encodes the message once more, with a new id."""

    last: bool  # applied after the others (a trailing CR must stay last)

    def apply(self, data: bytes, again: Callable[[], tuple[bytes, tuple[Any, ...]]]) -> tuple[bytes, tuple[Any, ...]]:
        """The changed bytes and any ids the change added."""
        ...

    def describe(self) -> str:
        """The change in a few words."""
        ...


@dataclass(frozen=True)
class FrameDraft:
    """One drawn frame: a message (or a batch of elements), what was done to it, and byte edits."""

    family: str
    body: Message | tuple[Message | Json, ...]  # a tuple is a batch: Messages and plain JSON values
    steps: tuple[str, ...] = ()
    edits: tuple[ByteEdit, ...] = ()

    @property
    def explicit_ids(self) -> tuple[Any, ...]:
        """Ids written into the draft itself (not handed out at send time); None is no id to repeat."""
        messages = [self.body] if isinstance(self.body, Message) else [m for m in self.body if isinstance(m, Message)]
        return tuple(value for m in messages for name, value in m.members
                     if name == "id" and value is not FRESH and value is not None)

    def title(self) -> str:
        """What the frame is, in words."""
        steps = [*self.steps, *(edit.describe() for edit in self.edits)]
        return "; ".join(steps) if steps else "the base request"

    def encode(self, fresh: Callable[[], int]) -> tuple[bytes, tuple[Any, ...]]:
        """The final bytes and every id in them."""
        if isinstance(self.body, Message):
            data, ids = self.body.encode(fresh)
            body = self.body

            def again() -> tuple[bytes, tuple[Any, ...]]:
                return body.encode(fresh)
        else:
            parts, ids = [], ()
            for element in self.body:
                part, more = element.encode(fresh) if isinstance(element, Message) else (dumps(element), ())
                parts.append(part)
                ids += more

            def again() -> tuple[bytes, tuple[Any, ...]]:
                return FrameDraft(self.family, self.body).encode(fresh)

            data = b"[" + b",".join(parts) + b"]"
        for edit in sorted(self.edits, key=lambda edit: edit.last):
            data, more = edit.apply(data, again)
            ids += more
        return data, ids

    def case(self, ctx: FrameContext, fresh: Callable[[], int]) -> Case:
        """The Case to send: exact bytes with fresh ids, and the expectation read from those bytes."""
        data, ids = self.encode(fresh)
        expect = expect_frame(data, ctx, ids)
        # A tool may take a while: wait for a valid call patiently, as the tool phases do.
        patient = expect.well_formed and expect.method == "tools/call"
        return Case(self.family, FRAMES_FAMILY, self.title(), data, expect, patient=patient, slow_ok=patient)
