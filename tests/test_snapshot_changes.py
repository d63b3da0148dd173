"""How each change between two surfaces is ranked: breaking, compatible or cosmetic."""

from __future__ import annotations

import pytest

from mcpfuzz.engine.snapshot.changes import ChangeKind, Impact, compare, worst
from mcpfuzz.engine.snapshot.surface import SnapshotError, build_surface, dumps, loads

pytestmark = pytest.mark.unit


def surface(tools: list[dict] | None = None, prompts: list[dict] | None = None, capabilities: dict | None = None,
            version: str = "1.0") -> dict:
    return build_surface(era="legacy", version="2025-11-25", server_info={"name": "s", "version": version},
                         capabilities=capabilities or {"tools": {}},
                         declared={"tools": tools or [], "prompts": prompts or []})


def tool(name: str = "t", properties: dict | None = None, required: list[str] | None = None, **more: object) -> dict:
    schema = {"type": "object", "properties": properties or {}, "required": required or []}
    return {"name": name, "inputSchema": schema, **more}


def kinds(old: dict, new: dict) -> set[tuple[Impact, ChangeKind, str]]:
    return {(change.impact, change.kind, change.path) for change in compare(old, new)}


def test_an_unchanged_surface_in_another_order_has_no_change() -> None:
    """Tools listed in another order, `required` and `enum` reordered: the same file, no change."""
    a = tool("a", {"x": {"enum": [1, 2]}, "y": {}}, ["x", "y"])
    b = tool("b")
    reordered = tool("a", {"y": {}, "x": {"enum": [2, 1]}}, ["y", "x"])
    assert dumps(surface([a, b])) == dumps(surface([b, reordered]))
    assert compare(surface([a, b]), surface([b, reordered])) == []


def test_input_narrowing_is_breaking_and_widening_compatible() -> None:
    old = surface([tool(properties={"n": {"type": "number"}, "s": {"type": "string", "maxLength": 10}})])
    narrowed = surface([tool(properties={"n": {"type": "integer"}, "s": {"type": "string", "maxLength": 5}})])
    assert kinds(old, narrowed) == {
        (Impact.BREAKING, ChangeKind.TYPE_NARROWED, "inputSchema.properties.n"),
        (Impact.BREAKING, ChangeKind.CONSTRAINT_TIGHTENED, "inputSchema.properties.s.maxLength")}
    assert kinds(narrowed, old) == {
        (Impact.COMPATIBLE, ChangeKind.TYPE_WIDENED, "inputSchema.properties.n"),
        (Impact.COMPATIBLE, ChangeKind.CONSTRAINT_LOOSENED, "inputSchema.properties.s.maxLength")}


def test_output_is_judged_the_other_way_round() -> None:
    """A field removed or a type widened in outputSchema breaks a client that reads it; a field added does not."""
    def with_output(properties: dict, required: list[str]) -> dict:
        return surface([tool(outputSchema={"type": "object", "properties": properties, "required": required})])

    old = with_output({"a": {"type": "integer"}, "b": {"type": "string"}}, ["a", "b"])
    new = with_output({"a": {"type": "number"}, "c": {"type": "string"}}, ["a"])
    assert kinds(old, new) == {
        (Impact.BREAKING, ChangeKind.TYPE_WIDENED, "outputSchema.properties.a"),
        (Impact.BREAKING, ChangeKind.OUTPUT_FIELD_REMOVED, "outputSchema.properties.b"),
        (Impact.COMPATIBLE, ChangeKind.OUTPUT_FIELD_ADDED, "outputSchema.properties.c")}


def test_hints_count_with_their_defaults() -> None:
    """readOnlyHint dropped (default false) is breaking; destructiveHint false dropped (default true) too."""
    safe = surface([tool(annotations={"destructiveHint": False})])
    bare = surface([tool()])
    assert kinds(safe, bare) == {(Impact.BREAKING, ChangeKind.HINT_WEAKENED, "annotations.destructiveHint")}
    assert kinds(bare, safe) == {(Impact.COMPATIBLE, ChangeKind.HINT_STRENGTHENED, "annotations.destructiveHint")}
    read_only = surface([tool(annotations={"readOnlyHint": True, "title": "T"})])
    changes = compare(read_only, bare)
    assert {(c.impact, c.kind) for c in changes} == {(Impact.BREAKING, ChangeKind.HINT_WEAKENED),
                                                     (Impact.COSMETIC, ChangeKind.TEXT_CHANGED)}


def test_a_rename_is_one_breaking_change_and_descriptions_are_cosmetic() -> None:
    old = surface([tool("fetch", {"url": {"type": "string", "description": "where"}}, ["url"], description="Get")])
    new = surface([tool("fetch_url", {"url": {"type": "string", "description": "from where"}}, ["url"],
                        description="Get a URL")], version="1.1")
    changes = compare(old, new)
    renamed = [c for c in changes if c.kind is ChangeKind.ITEM_RENAMED]
    assert len(renamed) == 1 and renamed[0].item == "tool/fetch" and renamed[0].after == "fetch_url"
    assert {c.kind for c in changes} == {ChangeKind.ITEM_RENAMED, ChangeKind.TEXT_CHANGED}
    assert worst(changes) is Impact.BREAKING
    wording = compare(surface([tool(description="a")]), surface([tool(description="b")]))
    assert [(c.impact, c.path) for c in wording] == [(Impact.COSMETIC, "description")]


def test_prompts_arguments_and_capabilities() -> None:
    def prompt(*arguments: tuple[str, bool]) -> list[dict]:
        return [{"name": "p", "arguments": [{"name": n, "required": r} for n, r in arguments]}]

    old = surface(prompts=prompt(("a", True), ("b", False)), capabilities={"tools": {"listChanged": True},
                                                                          "prompts": {}})
    new = surface(prompts=prompt(("b", True), ("c", False)), capabilities={"tools": {}})
    assert kinds(old, new) == {
        (Impact.BREAKING, ChangeKind.ARGUMENT_REMOVED, "arguments.a"),
        (Impact.BREAKING, ChangeKind.ARGUMENT_REQUIRED, "arguments.b"),
        (Impact.COMPATIBLE, ChangeKind.ARGUMENT_ADDED, "arguments.c"),
        (Impact.BREAKING, ChangeKind.CAPABILITY_REMOVED, "prompts"),
        (Impact.BREAKING, ChangeKind.CAPABILITY_REMOVED, "tools.listChanged")}


def test_codes_are_unique_and_a_foreign_file_is_refused() -> None:
    assert len({kind.code for kind in ChangeKind}) == len(ChangeKind)
    with pytest.raises(SnapshotError, match="not an mcpfuzz snapshot"):
        loads('{"tools": {}}', "x.json")
    with pytest.raises(SnapshotError, match="not JSON"):
        loads("{", "x.json")
    assert loads(dumps(surface([tool()])), "x.json") == surface([tool()])


def test_every_change_code_is_documented() -> None:
    """docs/snapshot.md's table lists each kind with its code."""
    import re

    from tests.conftest import REPO_ROOT

    text = (REPO_ROOT / "docs" / "snapshot.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(MF-SNAP-\d{3})` \| `([a-z-]+)` \|", text, re.MULTILINE))
    assert rows == {kind.code: kind.value for kind in ChangeKind}
