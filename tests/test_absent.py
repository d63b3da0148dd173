"""ABSENT (a member left out) can never reach the wire: it is a type of its own that the encoder does not take,
so the type checker rejects a leak; no frame strategy puts one into a message; every id a frame or a server
carries (none, huge, deep) has the keys the random frames remember ids by."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcpfuzz.strategies.frames.draft import FrameDraft, Message
from mcpfuzz.strategies.frames.mutations import FAMILIES, frame_drafts

from mcpfuzz.engine.searches.frame_fuzz import FRAME_FIRST_ID, reuse_keys
from mcpfuzz.jsonrpc.encode import dumps, request
from mcpfuzz.jsonrpc.ids import ABSENT, Absent
from mcpfuzz.jsonrpc.incoming import classify
from tests.test_frame_fuzz import CONTEXTS

pytestmark = pytest.mark.process  # (the type checker runs as a process)

REPO = Path(__file__).resolve().parent.parent
LEAKS = {
    "an answer's id written back": "dumps(classify(b'{\"result\":{}}').id)\n",
    "an id left out, put in a frame's message": "Message(((\"id\", ABSENT),))\n",
    "a request member inside params": "dumps({\"params\": ABSENT})\n",
}


def test_absent_is_no_json_value_and_request_leaves_its_members_out() -> None:
    assert isinstance(ABSENT, Absent) and repr(ABSENT) == "<absent>"
    with pytest.raises(TypeError):
        json.dumps(ABSENT)
    assert dumps(request("ping", ABSENT, ABSENT)) == b'{"jsonrpc":"2.0","method":"ping"}'
    assert dumps(request(ABSENT, id=1, jsonrpc=ABSENT)) == b'{"id":1}'


@pytest.mark.parametrize("leak", sorted(LEAKS))
def test_the_type_checker_rejects_an_absent_member_on_its_way_to_the_wire(leak: str, tmp_path: Path) -> None:
    module = tmp_path / "view" / "leak.py"  # next to the view, whose mcpfuzz it imports
    module.parent.mkdir()
    module.write_text("from mcpfuzz.jsonrpc.encode import dumps\nfrom mcpfuzz.jsonrpc.ids import ABSENT\n"
                      "from mcpfuzz.jsonrpc.incoming import classify\n"
                      "from mcpfuzz.strategies.frames.draft import Message\n\n" + LEAKS[leak])
    # strategies/ ships as mcpfuzz.strategies: the checker reads a view of the tree with that layout (.ci/typecheck).
    view = tmp_path / "view" / "mcpfuzz"
    view.mkdir()
    for entry in (REPO / "mcpfuzz").iterdir():
        (view / entry.name).symlink_to(entry)
    (view / "strategies").symlink_to(REPO / "strategies")
    done = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental",
                           "--ignore-missing-imports", str(module)], capture_output=True, text=True,
                          cwd=view.parent, timeout=300, check=False)
    assert done.returncode == 1 and "Absent" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("family", FAMILIES)
def test_no_drawn_frame_carries_absent_and_every_id_it_carries_has_keys(family: str) -> None:
    fresh = itertools.count(FRAME_FIRST_ID + 1)
    ctx = CONTEXTS["legacy"]

    @settings(max_examples=60, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(frame_drafts(ctx, family))
    def check(draft: FrameDraft) -> None:
        messages = [draft.body] if isinstance(draft.body, Message) else \
            [m for m in draft.body if isinstance(m, Message)]
        assert all(value is not ABSENT for m in messages for _, value in m.members)
        data, ids = draft.encode(lambda: next(fresh))
        for rid in (*ids, *draft.explicit_ids):
            assert reuse_keys(rid)

    check()


@given(st.one_of(st.just(b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}'),
                 st.integers(1, 6000).map(lambda n: b'{"jsonrpc":"2.0","id":' + b"7" * n + b',"result":{}}'),
                 st.integers(1, 900).map(lambda n: b'{"jsonrpc":"2.0","id":' + b"[" * n + b"]" * n + b',"result":{}}')))
@settings(max_examples=40, database=None, deadline=None)
def test_every_id_an_answer_carries_has_keys(line: bytes) -> None:
    incoming = classify(line)
    keys = reuse_keys(incoming.id)
    assert keys if incoming.id is not ABSENT else keys == set()
