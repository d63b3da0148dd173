"""What the lint rules read (a snapshot of what the server declared) and what they report (problems)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class LintSeverity(str, Enum):
    """How bad a problem is: an error breaks the spec, a warning a SHOULD or a trap, info is advice."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def __str__(self) -> str:
        return self.value

    @property
    def rank(self) -> int:
        """Errors first when problems are sorted."""
        return {"error": 0, "warning": 1, "info": 2}[self.value]


class Category(str, Enum):
    """The module a rule lives in."""

    PROTOCOL = "protocol"
    SCHEMA = "schema"
    SEQUENCE = "sequence"
    METADATA = "metadata"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Found:
    """One thing a rule found: where, what is wrong, how to fix it, and the target it concerns."""

    location: str  # e.g. `tools[memory-write].inputSchema.properties.limit`
    message: str
    fix: str
    target: str | None = None  # `tool/NAME`, `resource/URI`, `prompt/NAME`
    severity: LintSeverity | None = None  # None: the rule's own severity
    value: Any = None  # the offending declaration (shown shortened)
    # The `run` oracle that already reports this very thing (e.g. `response-schema` on tools/list): `run` skips it.
    covered_by: str | None = None


@dataclass(frozen=True)
class Problem:
    """A rule's finding, ready for a report."""

    rule: str
    name: str
    category: Category
    severity: LintSeverity
    location: str
    message: str
    fix: str
    target: str | None = None  # `tool/NAME`, or `tool/*` for one flaw on several tools
    value: Any = None
    # One flaw found in several places (lint/grouping.py): every target and location it was found at, first first,
    # and what the places share (the message with its values and names blanked). Empty: found once, here.
    targets: tuple[str, ...] = ()
    locations: tuple[str, ...] = ()
    evidence: str = ""

    @property
    def tool(self) -> str | None:
        """The tool's name when the problem concerns one tool."""
        if not self.target or not self.target.startswith("tool/") or self.target == "tool/*":
            return None
        return self.target.removeprefix("tool/")

    @property
    def count(self) -> int:
        """In how many places the flaw was found."""
        return max(1, len(self.locations))


@dataclass(frozen=True)
class ListOutcome:
    """What one list method (`tools/list`, ...) answered over every page."""

    method: str
    key: str  # the result member holding the items (`tools`, `resourceTemplates`, ...)
    capability: str  # the capability that declares it
    declared: bool  # whether the capability was declared
    answered: bool = False  # a reply came (result or error)
    items: list[Any] | None = None  # None unless every page was a result
    error_code: Any = None  # the code of an error answer
    looped: bool = False  # a page handed out a cursor handed out before (the listing stopped there)


@dataclass
class Declared:
    """Everything the lint rules judge: the handshake, the lists, and what a few cheap requests got back."""

    era: str  # "legacy" or "modern"
    version: str
    handshake_method: str  # `initialize` or `server/discover`
    handshake: Any = None  # its result (whatever the server sent)
    handshake_answered: bool = True
    lists: dict[str, ListOutcome] = field(default_factory=dict)  # by method
    responses: list[Any] = field(default_factory=list)  # every response message seen, decoded
    unknown_ids: list[Any] = field(default_factory=list)  # response ids that match no request sent
    unknown_method_reply: Any = None  # the reply to a method no server serves, None when silent
    liveness_method: str = "ping"
    liveness_reply: Any = None  # the reply to ping (legacy) or server/discover (modern), None when silent
    pre_init_reply: Any = None  # legacy: the reply to tools/list sent before initialize (None: silent/unchecked)
    # modern, when supportedVersions lists a legacy version: that version, and the reply to initialize asking for it
    announced: tuple[str, Any] | None = None
    session_ids: list[str] = field(default_factory=list)  # HTTP session ids handed out

    @property
    def capabilities(self) -> Any:
        """The capabilities the handshake declared (whatever was sent; {} without a handshake result)."""
        return self.handshake.get("capabilities") if isinstance(self.handshake, dict) else {}

    def items(self, method: str) -> list[Any]:
        """The items a list method returned (empty when it was not listed or failed)."""
        outcome = self.lists.get(method)
        return outcome.items if outcome is not None and outcome.items is not None else []
