"""Hypothesis strategies for random frames: one family per kind of mutation, each shrinking to the base request.

The base request is the era's simplest (`ping`, or `server/discover` with `_meta`), `tools/list`, or
`tools/call` of a real tool. Every choice lists its simplest option first and mutations come as a
short list, so the shrinker drops mutations one by one and ends on the plainest frame that still fails.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from mcpfuzz.strategies.frames.bytes import byte_edits
from mcpfuzz.strategies.frames.context import UNKNOWN_PREFIX, FrameContext
from mcpfuzz.strategies.frames.draft import FRESH, FrameDraft, Message
from mcpfuzz.strategies.frames.edits import Drop, Duplicate, Nest, Reorder, Respond, Retype, SetParam
from mcpfuzz.strategies.messages import FrameBuilder

from mcpfuzz.jsonrpc.ids import ABSENT
from mcpfuzz.jsonrpc.json_value import Absent, Json

KEYS = ("jsonrpc", "method", "params", "id")
ORDER = ("jsonrpc", "id", "method", "params")
JSONRPC_VALUES: tuple[Json, ...] = ("1.0", 2.0, None, "", "2", "2.0 ", 2, True, {}, [])
METHOD_VALUES: tuple[Json, ...] = (5, None, "", True, [], {})
PARAMS_VALUES: tuple[Json, ...] = ({}, "x", [], [1], None, 5, True)
NAME_VALUES: tuple[Json | Absent, ...] = (ABSENT, 5, None, "", "mcpfuzz-no-such-tool", [])
ARGUMENT_VALUES: tuple[Json | Absent, ...] = (ABSENT, "x", None, [], 5, True, {})
# Ids stay clear of the catalogue's (100+), the harness's (10000+), the tool calls' (2**32+) and the
# fresh ids of frames (2**40+).
BIG_IDS = (2**53 + 1, -(2**53 + 1), 2**63 - 1, -(2**63), 2**63, 2**64)
INVALID_IDS: tuple[Json, ...] = (None, 1.5, True, False, {}, [], -0.5, {"a": 1}, [1])
SCALARS: tuple[Json, ...] = (1, "x", None, True, [], {})
NEST_LIMIT = 256  # the catalogue's size/nested-256


def base_message(ctx: FrameContext, method: str) -> Message:
    """A valid request of the era with a fresh id; `tools/call` calls the context's tool with its simplest arguments."""
    builder = FrameBuilder(ctx.era, ctx.version)
    params: Json | Absent = ABSENT
    if method == "tools/call":
        assert ctx.tool is not None
        params = {"name": ctx.tool["name"], "arguments": ctx.arguments}
    return Message(tuple(builder.message(method, params, FRESH).items()))


def odd_ids() -> st.SearchStrategy[Json]:
    """Ids of every kind: digit strings, small and huge integers, any text, long strings, invalid types.

    Digit strings stay below the harness's ids: a server that turns "10001" into 10001 would answer
    for one of our barrier requests.
    """
    return st.one_of(
        st.integers(0, 9_999).map(str),
        st.integers(-1_000_000, 99),
        st.integers(0, 999).map(lambda n: f"0{n}"),
        st.text(st.characters(codec="utf-8"), max_size=12).filter(lambda text: not looks_numeric(text)),
        st.sampled_from(BIG_IDS),
        st.sampled_from((256, 10_000)).map(lambda n: "i" * n),
        st.sampled_from(INVALID_IDS),
    )


def looks_numeric(text: str) -> bool:
    """True for text a lax server may turn into a number (odd_ids keeps those in their own ranges)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def envelope_edits(ctx: FrameContext, *, odd: bool = True) -> st.SearchStrategy[Any]:
    """One change of the envelope: drop, retype, duplicate, reorder a member; a response; tools/call params.

    Without `odd`, ids stay fresh: where a frame holds several messages (a batch, two on a line), a
    written-in id would be sent twice, which MCP forbids (ids are unique per session).
    """
    unknown = st.text("abcdefghijklmnopqrstuvwxyz/._-", max_size=12).map(lambda name: UNKNOWN_PREFIX + name)
    edits = [
        st.builds(Drop, st.sampled_from(KEYS)),
        st.builds(Retype, st.just("jsonrpc"), st.sampled_from(JSONRPC_VALUES)),
        st.builds(Retype, st.just("method"), st.one_of(unknown, st.sampled_from(METHOD_VALUES))),
        st.builds(Retype, st.just("params"), st.sampled_from(PARAMS_VALUES)),
        *([st.builds(Retype, st.just("id"), odd_ids())] if odd else []),
        st.builds(Duplicate, st.sampled_from(KEYS)),
        st.builds(Reorder, st.permutations(ORDER).map(tuple)),
        st.builds(Respond, st.booleans()),
    ]
    if ctx.tool is not None:
        edits += [st.builds(SetParam, st.just("name"), st.sampled_from(NAME_VALUES)),
                  st.builds(SetParam, st.just("arguments"), st.sampled_from(ARGUMENT_VALUES))]
    return st.one_of(edits)


def _draft(family: str, message: Message, edits: list[Any], bytes_: tuple[Any, ...] = ()) -> FrameDraft:
    for edit in edits:
        message = edit.apply(message)
    return FrameDraft(family, message, tuple(edit.describe() for edit in edits), bytes_)


def _element(ctx: FrameContext, edits: list[Any]) -> Message:
    message = base_message(ctx, ctx.barrier_method)
    for edit in edits:
        message = edit.apply(message)
    return message


def frame_drafts(ctx: FrameContext, family: str) -> st.SearchStrategy[FrameDraft]:
    """The frames of one family (FAMILIES), for the era and tool of `ctx`."""
    methods = st.sampled_from(ctx.methods)
    edits = envelope_edits(ctx)
    if family == "envelope":
        return st.builds(lambda method, chosen: _draft(family, base_message(ctx, method), chosen), methods,
                         st.lists(edits, min_size=1, max_size=3))
    if family == "id":
        # Odd ids, or none (a notification), on the era's simplest request; the envelope family also mixes
        # odd ids with the other methods and with broken envelopes.
        change = st.one_of(odd_ids().map(lambda rid: Retype("id", rid)), st.just(Drop("id")))
        return change.map(lambda edit: _draft(family, base_message(ctx, ctx.barrier_method), [edit]))
    if family == "bytes":
        return st.builds(lambda method, chosen, raw: _draft(family, base_message(ctx, method), chosen, tuple(raw)),
                         methods, st.lists(envelope_edits(ctx, odd=False), max_size=1),
                         st.lists(byte_edits(), min_size=1, max_size=3))
    if family == "nesting":
        return st.builds(lambda method, levels, array, chosen: _draft(
            family, base_message(ctx, method), [Nest(levels, array), *chosen]),
            methods, st.integers(1, NEST_LIMIT), st.booleans(), st.lists(edits, max_size=2))
    if family == "batch":
        message = st.lists(envelope_edits(ctx, odd=False), max_size=1).map(lambda chosen: _element(ctx, chosen))
        element = st.one_of(message, st.sampled_from(SCALARS))
        return st.lists(element, max_size=3).map(
            lambda elements: FrameDraft(family, tuple(elements), (f"a batch of {len(elements)}",)))
    raise ValueError(f"unknown frame family {family!r}; families are {', '.join(FAMILIES)}")


FAMILIES = ("id", "envelope", "bytes", "batch", "nesting")
