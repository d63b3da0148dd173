"""Envelope-level edits of a message: drop, duplicate, retype or reorder members, a response, nested params."""

from __future__ import annotations

from dataclasses import dataclass

from mcpfuzz.strategies.frames.draft import Message

from mcpfuzz.jsonrpc.ids import ABSENT, show_id
from mcpfuzz.jsonrpc.json_value import Absent, Json


@dataclass(frozen=True)
class Drop:
    """A member left out."""

    key: str

    def apply(self, message: Message) -> Message:
        """The message without it."""
        return Message(tuple(m for m in message.members if m[0] != self.key))

    def describe(self) -> str:
        """In words."""
        return f"no {self.key}"


@dataclass(frozen=True)
class Duplicate:
    """A member given twice, with the same value (RFC 8259 section 4: readers may differ)."""

    key: str

    def apply(self, message: Message) -> Message:
        """The message with the member repeated right after itself."""
        members = list(message.members)
        for index, (name, value) in enumerate(members):
            if name == self.key:
                return Message(tuple(members[:index + 1] + [(name, value)] + members[index + 1:]))
        return message

    def describe(self) -> str:
        """In words."""
        return f"{self.key} twice"


@dataclass(frozen=True)
class Retype:
    """A member set to a value of another type or shape (added when it was missing)."""

    key: str
    value: Json

    def apply(self, message: Message) -> Message:
        """The message with the new value."""
        if all(name != self.key for name, _ in message.members):
            return Message((*message.members, (self.key, self.value)))
        return Message(tuple((name, self.value if name == self.key else value) for name, value in message.members))

    def describe(self) -> str:
        """In words."""
        return f"{self.key} {show_id(self.value)}"


@dataclass(frozen=True)
class Reorder:
    """The members in another order (JSON objects are unordered)."""

    order: tuple[str, ...]

    def apply(self, message: Message) -> Message:
        """The message reordered."""
        rank = {key: index for index, key in enumerate(self.order)}
        return Message(tuple(sorted(message.members, key=lambda member: rank.get(member[0], len(rank)))))

    def describe(self) -> str:
        """In words."""
        return "members in the order " + ",".join(self.order)


@dataclass(frozen=True)
class SetParam:
    """A member of object params set (or left out, for ABSENT): tools/call `name` and `arguments`."""

    key: str
    value: Json | Absent

    def apply(self, message: Message) -> Message:
        """The message with the new params."""
        params = message.get("params")
        if not isinstance(params, dict):
            return message
        changed = {k: v for k, v in params.items() if k != self.key}
        if self.value is not ABSENT:
            changed[self.key] = self.value
        return Retype("params", changed).apply(message)

    def describe(self) -> str:
        """In words."""
        return f"no params.{self.key}" if self.value is ABSENT else f"params.{self.key} {show_id(self.value)}"


@dataclass(frozen=True)
class Respond:
    """A response object instead of the request (jsonrpc and id kept)."""

    error: bool

    def apply(self, message: Message) -> Message:
        """The response."""
        outcome: tuple[str, Json] = ("error", {"code": -1, "message": "mcpfuzz"}) if self.error else ("result", {})
        return Message((*(m for m in message.members if m[0] in ("jsonrpc", "id")), outcome))

    def describe(self) -> str:
        """In words."""
        return f"{'an error' if self.error else 'a result'} response instead of a request"


@dataclass(frozen=True)
class Nest:
    """Params carry a value nested `levels` deep (objects or arrays)."""

    levels: int
    array: bool

    def apply(self, message: Message) -> Message:
        """The message with the nested value in its params."""
        params = message.get("params", ABSENT)
        if params is not ABSENT and not isinstance(params, dict):
            return message
        deep: Json = "bottom"
        for _ in range(self.levels):
            deep = [deep] if self.array else {"a": deep}
        return Retype("params", {**(params if isinstance(params, dict) else {}), "deep": deep}).apply(message)

    def describe(self) -> str:
        """In words."""
        return f"params nested {self.levels} deep ({'arrays' if self.array else 'objects'})"
