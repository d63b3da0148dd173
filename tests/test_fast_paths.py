"""The speed-ups keep behaviour: one write per case keeps the frame before its barrier, member-wise
validation of an edit agrees with validating the whole value, memoized sub-strategies draw the same
values, and Hypothesis' caches live outside the working directory."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis_jsonschema import _from_schema as hjs
from mcpfuzz.strategies.arguments.edges import EDGE_NUMBERS, EDGE_STRINGS
from mcpfuzz.strategies.arguments.negative import EXTRA_PROPERTY
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema, draw_examples
from mcpfuzz.strategies.arguments.sites import MISSING, delete_at, set_at

from mcpfuzz.engine.searches.hypothesis_bridge import UNICODE_TABLES, hypothesis_home
from mcpfuzz.engine.session.session import Session, SessionOptions
from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.transport.stdio_target import StdioTarget
from tests.engine_runs import MCP_SERVER

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
FLAT = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 5}, "count": {"type": "integer", "minimum": 0},
    "mode": {"enum": ["a", "b"]}, "inner": {"type": "object", "properties": {"x": {"type": "integer"}},
                                            "required": ["x"], "additionalProperties": False},
    "free": {"type": "object", "additionalProperties": {"type": "integer", "maximum": 3}},
    "never": False, "any": True},
    "required": ["name", "inner"], "additionalProperties": False}
# Keywords that are not member-wise (minProperties, a $ref on the way, dependentRequired): whole-value path.
TANGLED = {"type": "object", "properties": {
    "a": {"type": "object", "properties": {"x": {"type": "integer"}}, "minProperties": 1},
    "b": {"$ref": "#/$defs/b"}, "c": {"type": "string", "format": "uuid"}},
    "required": ["a"], "dependentRequired": {"c": ["b"]},
    "$defs": {"b": {"type": "object", "properties": {"y": {"enum": [1, 2]}}, "required": ["y"]}},
    "additionalProperties": {"type": "string"}}
VALUES: list[Any] = [None, True, 0, -1, 7, 2.5, "", "x", "toolong", [], [1], {}, {"x": 1}, {"x": "1"}, {"y": 3},
                     *(value for _, value in EDGE_STRINGS + EDGE_NUMBERS)]


@pytest.mark.parametrize("schema", [FLAT, TANGLED], ids=["memberwise", "tangled"])
def test_edit_errors_agree_with_validating_the_whole_value(schema: dict) -> None:
    arguments = ArgumentSchema(schema)
    bases = draw_examples(arguments.positive, 8, seed=2) + draw_examples(arguments.populated, 8, seed=3)
    paths = [site.path for site in arguments.sites] + [(*path, EXTRA_PROPERTY) for path, _ in arguments.objects]
    paths += [("inner", "zz"), ("free", "k"), ("missing", "deeper")]
    for base in bases:
        for path in paths:
            for new in [MISSING, *VALUES]:
                edited = delete_at(base, path) if new is MISSING else set_at(base, path, new)
                expected = None if edited is None else collections.Counter(
                    str(error.validator) for error in arguments.prepared.validator.iter_errors(edited))
                got = arguments.edit_errors(base, path, new)
                assert (None if got is None else collections.Counter(got)) == expected, (base, path, new)


def test_set_at_copies_only_the_path() -> None:
    base = {"a": {"b": 1, "c": [1, 2]}, "d": {"e": 2}}
    changed = set_at(base, ("a", "b"), 5)
    assert changed == {"a": {"b": 5, "c": [1, 2]}, "d": {"e": 2}}
    assert base == {"a": {"b": 1, "c": [1, 2]}, "d": {"e": 2}}  # the original is left alone
    assert list(changed) == ["a", "d"] and changed["d"] is base["d"]
    assert delete_at(base, ("a", "c")) == {"a": {"b": 1}, "d": {"e": 2}} and base["a"]["c"] == [1, 2]
    assert set_at(base, ("d", "e", "f"), 1) is None and delete_at(base, ("x",)) is None


def test_memoized_sub_strategies_draw_the_same_values() -> None:
    """Strategies built once per subschema draw exactly what hypothesis-jsonschema's rebuilt ones draw."""
    assert getattr(hjs.merged_as_strategies, "mcpfuzz_memo", False)
    # minProperties: the compiler leaves the whole object to hypothesis-jsonschema, whose memos are tested here.
    drawable = {**FLAT, "properties": {k: v for k, v in FLAT["properties"].items() if k != "never"},
                "minProperties": 1}
    memoized = draw_examples(ArgumentSchema(drawable).populated, 30, seed=5)
    saved = hjs.merged_as_strategies, getattr(hjs, "__from_schema")
    try:
        hjs.merged_as_strategies = hjs.merged_as_strategies.__wrapped__
        setattr(hjs, "__from_schema", getattr(hjs, "__from_schema").__wrapped__)
        rebuilt = draw_examples(ArgumentSchema(drawable).populated, 30, seed=5)
    finally:
        hjs.merged_as_strategies = saved[0]
        setattr(hjs, "__from_schema", saved[1])
    assert memoized == rebuilt and len(memoized) == 30


def test_frame_and_barrier_go_out_in_order_and_count_as_two(tmp_path: Path) -> None:
    log = tmp_path / "frames.log"

    async def main() -> tuple[int, list[bytes], Any]:
        async with Session(StdioTarget((sys.executable, str(MCP_SERVER))), SessionOptions(frame_log=log)) as session:
            await session.ensure_ready()
            before = session.wire.frames_sent
            frame = b'{"jsonrpc":"2.0","id":101,"method":"mcpfuzz/no-such-method"}'
            case = Case("x", "method", "an unknown method", frame, Expectation(judge="method-not-found", id=101))
            exchange = await session.run_case(case)
            return session.wire.frames_sent - before, list(session.wire.log)[-2:], exchange

    sent, last, exchange = anyio.run(main)
    assert sent == 2 and last[0].endswith(b'"mcpfuzz/no-such-method"}') and b'"method":"ping"' in last[1]
    assert exchange.barrier_answered is True and not exchange.write_error
    assert log.read_bytes().splitlines()[-2:] == last


def test_hypothesis_caches_stay_out_of_the_working_directory(tmp_path: Path) -> None:
    """A run's Hypothesis home is a per-user cache (the Unicode tables built there by a child), not ./.hypothesis.

    The same fresh home shows the warm-up: it builds the tables in a thread of its own, a second start() gets the
    same warm-up, and ready() is awaited without holding the event loop (one table build for both checks)."""
    cache, work = tmp_path / "cache", tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    script = textwrap.dedent("""
        import anyio
        import hypothesis.configuration
        from mcpfuzz.engine.searches.hypothesis_bridge import HypothesisWarmup
        from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema, draw_examples
        warmup = HypothesisWarmup.start()
        assert HypothesisWarmup.start() is warmup
        anyio.run(warmup.ready)
        print(warmup.is_ready, warmup.error)
        draw_examples(ArgumentSchema({"type": "object", "properties": {"s": {"type": "string"}}}).positive, 5, 1)
        print(hypothesis.configuration.storage_directory("x").path.parent)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=work, env=env, capture_output=True, text=True,
                          timeout=300, check=True)
    ready, error, storage = done.stdout.split()
    assert (ready, error) == ("True", "None")
    home = cache / "mcpfuzz" / "hypothesis"
    assert Path(storage) == home
    assert not (work / ".hypothesis").exists()
    assert {path.name for path in home.glob("unicode_data/*/*")} == {f"{name}.json.gz" for name in UNICODE_TABLES}
    assert hypothesis_home() is not None


def test_importing_the_engine_starts_no_process(tmp_path: Path) -> None:
    """The Unicode tables are built when a run first needs them, not as a side effect of an import."""
    script = textwrap.dedent("""
        import subprocess
        def refuse(*args, **kwargs):
            raise AssertionError(f"a process was started at import: {args}")
        subprocess.run = refuse
        import mcpfuzz.engine.runner, mcpfuzz.engine.soak.soak, mcpfuzz.engine.searches.hypothesis_bridge
    """)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "empty-cache")}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=True)


def test_after_the_warm_up_a_full_collection_skips_the_long_lived_heap_and_still_frees_new_cycles() -> None:
    """The warm-up freezes what every module and Hypothesis' tables left alive: a full collection then walks only
    what was made after it, and garbage made after it is collected as before."""
    script = textwrap.dedent("""
        import gc
        from mcpfuzz.engine.searches.hypothesis_bridge import HypothesisWarmup
        HypothesisWarmup.start().wait()
        frozen, walked = gc.get_freeze_count(), len(gc.get_objects())
        assert frozen > 10 * walked, (frozen, walked)
        class Node:
            pass
        a, b = Node(), Node()
        a.other, b.other = b, a
        del a, b
        assert gc.collect() >= 2
    """)
    subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)


def test_hypothesis_storage_directory_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "mine"))
    assert hypothesis_home() == tmp_path / "mine"
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hypothesis_home() == tmp_path / "xdg" / "mcpfuzz" / "hypothesis"
