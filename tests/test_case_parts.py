"""Case parts: each oracle's data about a case writes itself into a transcript and reads back, found by its
module with no list to edit; a part of a newer version is ignored by an older reader, as `extra` always was."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import pytest

from mcpfuzz.jsonrpc import parts
from mcpfuzz.jsonrpc.case_json import expectation_from_json, expectation_to_json
from mcpfuzz.jsonrpc.expectation import Expectation, ReaderLimit, no_reply, result
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.jsonrpc.parts.leniency import Lenient, QuietOk
from mcpfuzz.jsonrpc.parts.part import OBSERVED, CasePart, case_part
from mcpfuzz.jsonrpc.parts.past_limit import PastLimit
from mcpfuzz.jsonrpc.parts.registry import registered_parts
from mcpfuzz.jsonrpc.parts.slow_after import SlowAfter
from mcpfuzz.jsonrpc.parts.tool_call import ToolCallCheck

pytestmark = pytest.mark.unit


class Shade(str, Enum):
    LIGHT = "light"
    DARK = "dark"


@case_part("test-shades")
@dataclass(frozen=True)
class Shades(CasePart):
    """A part as a new oracle writes it: fields only, the codec is CasePart's."""

    shade: Shade
    pairs: tuple[tuple[int, str], ...] = ()
    limit: float | None = None
    maybe: Shade | None = None
    seen: tuple[str, ...] = field(default=(), metadata=OBSERVED)


def test_a_part_with_no_codec_of_its_own_round_trips_by_its_field_types() -> None:
    part = Shades(Shade.DARK, ((1, "a"), (2, "b")), 1.5, Shade.LIGHT, seen=("observed",))
    expect = result(3, "tools/call").with_part(part)
    data = json.loads(json.dumps(expectation_to_json(expect)))
    assert data["extra"]["test-shades"] == {"shade": "dark", "pairs": [[1, "a"], [2, "b"]], "limit": 1.5,
                                            "maybe": "light"}
    back = expectation_from_json(data).part(Shades)
    assert back == Shades(Shade.DARK, ((1, "a"), (2, "b")), 1.5, Shade.LIGHT)  # the observed field is not kept
    assert back is not None and isinstance(back.shade, Shade) and isinstance(back.pairs[0], tuple)


def test_every_module_of_the_parts_package_is_read_back_without_a_list() -> None:
    found = {kind.__module__.rsplit(".", 1)[-1] for kind in registered_parts()}
    modules = {path.stem for path in Path(parts.__path__[0]).glob("*.py")} - {"__init__", "part", "registry"}
    assert modules <= found


def test_parts_compare_in_one_order_and_one_of_each_kind() -> None:
    call = ToolCallCheck("echo", valid=True)
    one = Expectation(judge=OracleId.PARSE_ERROR, parts=(Lenient(), call))
    other = Expectation(judge=OracleId.PARSE_ERROR, parts=(call, Lenient()))
    assert one == other and one.has(Lenient) and not one.has(QuietOk)
    with pytest.raises(ValueError):
        Expectation(judge=OracleId.PARSE_ERROR, parts=(Lenient(), Lenient()))
    slower = one.with_part(SlowAfter(2.0)).with_part(SlowAfter(3.0))
    assert slower.part(SlowAfter) == SlowAfter(3.0) and slower.part(ToolCallCheck) == call


def test_a_transcript_member_no_part_reads_is_ignored() -> None:
    data = expectation_to_json(no_reply().with_part(PastLimit(ReaderLimit.SIZE)))
    data["extra"]["written-by-a-newer-version"] = {"anything": [1, 2]}
    assert expectation_from_json(data) == no_reply().with_part(PastLimit(ReaderLimit.SIZE))


def test_a_key_is_registered_once() -> None:
    with pytest.raises(ValueError):
        case_part("test-shades")(type("Again", (CasePart,), {}))
