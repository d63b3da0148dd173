"""Kinds of call target: the prefix of a target's name in reports, corpus file names and a soak's schedule."""

from __future__ import annotations

from enum import Enum


class TargetKind(str, Enum):
    """A kind of target; a case that calls one has the kind's value as its family and the target's name as id."""

    TOOL = "tool"
    METHOD = "method"  # a plain JSON-RPC 2.0 method declared by an OpenRPC document

    def label(self, name: str) -> str:
        """The target's name in reports: `tool/NAME`."""
        return f"{self.value}/{name}"
