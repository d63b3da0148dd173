"""Flags that each loosen how one error-code oracle reads a case: present or absent, written as `true`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpfuzz.jsonrpc.parts.part import CasePart, P, case_part


class _Flag(CasePart):
    """A part with no data: the case has it or not."""

    def to_extra(self) -> dict[str, Any]:
        return {self.key: True}

    @classmethod
    def from_extra(cls: type[P], extra: Mapping[str, Any]) -> P | None:
        return cls() if extra.get(cls.key) else None


@case_part("lenient")
@dataclass(frozen=True)
class Lenient(_Flag):
    """parse-error: a JSON parser may accept the frame, so an answer to it is no finding."""


@case_part("quiet_ok")
@dataclass(frozen=True)
class QuietOk(_Flag):
    """invalid-request: silence is low although the id was readable."""


@case_part("is_error_result_ok")
@dataclass(frozen=True)
class IsErrorResultOk(_Flag):
    """invalid-params: a tool result with isError true is a correct refusal."""
