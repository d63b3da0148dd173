"""Payload families: which properties get which family, and that every payload is safe by construction."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

import pytest
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema
from mcpfuzz.strategies.payloads.calls import payload_calls
from mcpfuzz.strategies.payloads.canaries import HIT_FILE, CanaryLayout
from mcpfuzz.strategies.payloads.classifier import families_of
from mcpfuzz.strategies.payloads.commands import command_payloads
from mcpfuzz.strategies.payloads.expressions import expression_payloads
from mcpfuzz.strategies.payloads.family import Family
from mcpfuzz.strategies.payloads.paths import path_payloads
from mcpfuzz.strategies.payloads.urls import URL_PAYLOADS

pytestmark = pytest.mark.unit

LAYOUT = CanaryLayout("/tmp/mcpfuzz-workspace-test", "/tmp/mcpfuzz-canary-test", "0123abcd")


@pytest.mark.parametrize(("name", "schema", "expected"), [
    ("filePath", {"type": "string"}, (Family.PATH,)),
    ("target", {"type": "string", "description": "Folder to list"}, (Family.PATH,)),
    ("expression", {"type": "string"}, (Family.EXPRESSION,)),
    ("sql", {"type": "string"}, (Family.COMMAND,)),
    ("pattern", {"type": "string"}, (Family.REGEX,)),
    ("where", {"type": "string", "format": "uri"}, (Family.URL,)),
    ("name", {"type": "string"}, ()),
    ("path", {"type": "string", "enum": ["a", "b"]}, ()),
    ("path", {"type": "integer"}, ()),
])
def test_families_by_meaning(name: str, schema: dict, expected: tuple[Family, ...]) -> None:
    assert families_of(name, schema) == expected


def test_urls_reach_only_loopback() -> None:
    for _, url in URL_PAYLOADS:
        assert urlsplit(url).hostname in (None, "127.0.0.1", "::1"), url


def test_path_escapes_stay_inside_the_planted_root() -> None:
    for _, path in path_payloads(LAYOUT):
        for variant in (path, path.replace("\\", "/")):
            resolved = os.path.normpath(os.path.join(LAYOUT.workspace, variant.split("\x00")[0]))
            assert resolved == LAYOUT.root or resolved.startswith(LAYOUT.root + "/"), path
    assert not any(".." in path for _, path in path_payloads(None))  # no escape without a planted workspace


def test_executable_payloads_only_create_a_hit_file() -> None:
    executable = [*command_payloads(LAYOUT, "tool/x/properties/q"), *expression_payloads(LAYOUT, "tool/x")]
    for label, value in executable:
        if LAYOUT.hits not in value:
            continue
        named = re.findall(rf"{re.escape(LAYOUT.hits)}/([\w-]+)", value)
        assert len(named) == 1 and HIT_FILE.fullmatch(named[0]), (label, value)
        assert "rm " not in value and "http" not in value
    tokens = [v for _, v in executable if LAYOUT.hits in v]
    assert len(tokens) == len(set(tokens))
    assert all(LAYOUT.hits not in v for _, v in command_payloads(None, "x") + expression_payloads(None, "x"))


def test_payload_calls_respect_the_schema() -> None:
    schema = ArgumentSchema({"type": "object", "properties": {"path": {"type": "string", "maxLength": 40},
                                                              "count": {"type": "integer"}},
                             "required": ["path"]})
    calls = payload_calls(schema, [{"path": "a", "count": 1}], LAYOUT, "tool/read")
    assert calls
    assert all(schema.is_valid(call.arguments) and len(call.arguments["path"]) <= 40 for call in calls)
    assert any(call.arguments["path"] == "../workspace-private/secret.txt" for call in calls)
    assert all(call.description.startswith(("path payload", "command payload")) for call in calls)


def test_values_read_back_holding_a_canary_are_never_reused() -> None:
    """A --security answer quoting a canary (a file read, a listing, a link): its token, and any path or name holding
    it or a hit file's name, never enters the stateful pool, the dictionary or the links a run sends again."""
    from mcpfuzz.strategies.arguments.dictionary import Dictionary
    from mcpfuzz.strategies.arguments.harvest import harvest, linked_uris
    from mcpfuzz.strategies.payloads.canaries import Place, canary_token, carries_canary

    from tests.test_oracles_pure import exchange, result, tool_call

    token = canary_token(Place.SIBLING, LAYOUT.nonce)
    hit = f"{LAYOUT.hits}/hit-0123456789abcdef"
    values = {"id": "item-7", "path": f"{LAYOUT.workspace}/{token}", "hit": hit, "read": token, "name": "notes.txt"}
    answer = {"content": [{"type": "text", "text": f"{token}\n"},
                          {"type": "resource_link", "uri": f"file://{LAYOUT.sibling}/{token}", "name": "x"},
                          {"type": "resource_link", "uri": "file:///srv/ok.txt", "name": "ok"}],
              "structuredContent": values}
    read = exchange(tool_call(5), result(5, answer))
    pool = harvest(read, [])
    assert set(pool) == {"item-7", "notes.txt"}
    assert linked_uris(read, []) == ["file:///srv/ok.txt"]
    words = Dictionary()
    words.add_result(read)
    words.add([token, f"../workspace-private/{token}", "plain"])
    assert set(words.words) == {"item-7", "notes.txt", "plain"}
    assert carries_canary(hit) and carries_canary(f"x {token} y") and not carries_canary("mcpfuzz-canary-x")
