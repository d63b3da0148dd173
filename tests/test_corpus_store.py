"""The corpus store (names, repeats, manifest, broken files, kill -9 safety) and its redactor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpfuzz import __version__
from mcpfuzz.corpus.redact import REDACTED, Redactor, is_secret_name
from mcpfuzz.corpus.store import (
    FORMAT_VERSION,
    MANIFEST,
    CorpusError,
    CorpusStore,
    transcript_name,
    write_json_atomic,
)
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit


def transcript(fingerprint: str = "0123456789ab", **extra: object) -> dict:
    """A minimal transcript."""
    return {"target": "tools/call", "oracle": "no-crash", "fingerprint": fingerprint, **extra}


# --- names -------------------------------------------------------------------------------------------


def test_name_joins_the_parts() -> None:
    """A plain target keeps its spelling."""
    assert transcript_name("initialize", "id-preserved", "abc123") == "initialize_id-preserved_abc123.json"


def test_name_sanitises_slashes_and_odd_characters() -> None:
    """`/`, spaces, quotes, non-ASCII and path tricks all become `-`; nothing can escape the folder."""
    name = transcript_name("tools/call ../../etc/passwd\"é", "no-crash", "abc123")
    assert name == "tools-call-..-..-etc-passwd--_no-crash_abc123.json"
    assert "/" not in transcript_name("../x", "o", "f")
    assert not transcript_name(".hidden", "o", "f").startswith(".")


def test_long_name_is_capped_and_keeps_the_fingerprint() -> None:
    """A huge target is cut below ~150 chars; the fingerprint survives and distinct long targets stay apart."""
    fingerprint = "f" * 12
    first = transcript_name("t" * 1000 + "a", "no-crash", fingerprint)
    second = transcript_name("t" * 1000 + "b", "no-crash", fingerprint)
    assert len(first) <= 150
    assert first.endswith(f"_no-crash_{fingerprint}.json")
    assert first != second


# --- save, repeat, load ------------------------------------------------------------------------------


def test_save_new_then_again_keeps_created_and_counts_seen(tmp_path: Path) -> None:
    """The second save of a failure replaces the content in the same file, keeps `created`, seen=2."""
    root = tmp_path / "corpus"
    store = CorpusStore(root)
    assert not root.exists(), "the folder is created lazily"
    path, is_new = store.save(transcript(message="first"))
    assert is_new and path.parent == root
    first = json.loads(path.read_text())
    assert first["seen"] == 1 and first["created"] == first["updated"]
    assert first["format"] == FORMAT_VERSION and first["mcpfuzz_version"] == __version__

    time.sleep(0.01)
    again, is_new = store.save(transcript(message="second"))
    second = json.loads(again.read_text())
    assert again == path and not is_new
    assert second["message"] == "second" and second["seen"] == 2
    assert second["created"] == first["created"] and second["updated"] > first["updated"]
    assert sorted(p.name for p in root.iterdir()) == sorted([MANIFEST, path.name])


def test_save_does_not_change_the_callers_dict(tmp_path: Path) -> None:
    """The store adds its fields to a copy."""
    original = transcript()
    CorpusStore(tmp_path).save(original)
    assert original == transcript()


def test_manifest_is_written_with_each_transcript(tmp_path: Path) -> None:
    """manifest.json records the format, the version and an ISO-8601 UTC time."""
    store = CorpusStore(tmp_path)
    store.save(transcript())
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert manifest["format"] == FORMAT_VERSION and manifest["mcpfuzz_version"] == __version__
    assert manifest["updated"].endswith("Z") and "T" in manifest["updated"]


def test_future_format_is_refused_clearly(tmp_path: Path) -> None:
    """A corpus written by a newer format raises CorpusError naming the format, the folder and a tip."""
    (tmp_path / MANIFEST).write_text(json.dumps({"format": FORMAT_VERSION + 1}))
    with pytest.raises(CorpusError) as caught:
        CorpusStore(tmp_path)
    text = str(caught.value)
    assert f"format {FORMAT_VERSION + 1}" in text and str(tmp_path) in text and "upgrade" in text.lower()
    assert caught.value.tip


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    """A corpus path that is a file raises CorpusError rather than an OSError at the first save."""
    target = tmp_path / "corpus"
    target.write_text("")
    with pytest.raises(CorpusError, match="not a folder"):
        CorpusStore(target)


def test_broken_files_are_reported_not_raised(tmp_path: Path) -> None:
    """Truncated, non-object and keyless files land in the broken list; good ones load, sorted by name."""
    store = CorpusStore(tmp_path)
    good_b, _ = store.save(transcript("bbbb"))
    good_a, _ = store.save(transcript("aaaa"))
    (tmp_path / "truncated.json").write_text('{"target": "x", "oracle": ')
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "keyless.json").write_text('{"target": "x"}')
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "future.json").write_text(json.dumps(transcript(format=FORMAT_VERSION + 1)))
    (tmp_path / ".tmp-abc").write_text("{")
    (tmp_path / ".tmp-def.json").write_text("{")

    loaded, broken = store.load_all()
    assert [p for p, _ in loaded] == sorted([good_a, good_b])
    reasons = {p.name: reason for p, reason in broken}
    assert set(reasons) == {"truncated.json", "list.json", "keyless.json", "binary.json", "future.json"}
    assert "not valid JSON" in reasons["truncated.json"]
    assert "oracle" in reasons["keyless.json"] and "fingerprint" in reasons["keyless.json"]
    assert "newer" in reasons["future.json"]


def test_load_all_of_a_missing_folder_is_empty(tmp_path: Path) -> None:
    """No folder yet means no transcripts, not an error."""
    assert CorpusStore(tmp_path / "nothing").load_all() == ([], [])


def test_load_raises_a_clear_error(tmp_path: Path) -> None:
    """load() of a missing or broken file raises CorpusError with the path."""
    store = CorpusStore(tmp_path)
    with pytest.raises(CorpusError, match="no such file") as caught:
        store.load(tmp_path / "missing.json")
    assert str(tmp_path / "missing.json") in str(caught.value)
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(CorpusError, match="not valid JSON"):
        store.load(tmp_path / "bad.json")


def test_mark_and_remove(tmp_path: Path) -> None:
    """mark() adds fields atomically and keeps the rest; remove() deletes (twice is fine)."""
    store = CorpusStore(tmp_path)
    path, _ = store.save(transcript(message="m"))
    store.mark(path, status="fixed")
    data = store.load(path)
    assert data["status"] == "fixed" and data["message"] == "m" and data["seen"] == 1
    assert not list(tmp_path.glob(".tmp-*"))
    store.remove(path)
    store.remove(path)
    assert store.load_all() == ([], [])


def test_stale_temp_files_are_swept_on_save(tmp_path: Path) -> None:
    """A `.tmp-*` older than a minute goes on the next save; a fresh one (a live writer's) stays."""
    stale, fresh = tmp_path / ".tmp-stale", tmp_path / ".tmp-fresh"
    stale.write_text("{")
    fresh.write_text("{")
    old = time.time() - 120
    os.utime(stale, (old, old))
    CorpusStore(tmp_path).save(transcript())
    assert not stale.exists() and fresh.exists()


def test_write_json_atomic_leaves_no_temp_on_bad_data(tmp_path: Path) -> None:
    """A value JSON cannot encode raises before any file is touched."""
    target = tmp_path / "x.json"
    write_json_atomic(target, {"a": 1})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"a": object()})
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_lone_surrogates_are_written_as_escapes(tmp_path: Path) -> None:
    """Text that UTF-8 cannot encode still round-trips (as \\u escapes)."""
    store = CorpusStore(tmp_path)
    path, _ = store.save(transcript(received=["bad \udcff byte"]))
    assert store.load(path)["received"] == ["bad \udcff byte"]


# --- kill -9 -----------------------------------------------------------------------------------------

WRITER = """
import sys
from pathlib import Path
from mcpfuzz.corpus.store import CorpusStore

store = CorpusStore(Path(sys.argv[1]))
run = sys.argv[2]
frame = "x" * 1_000_000
for i in range(10**9):
    # Mostly three names saved again and again, plus a few new ones per run.
    fingerprint = f"new-{run}-{i}" if i < 10 and i % 2 else f"same-{i % 3}"
    store.save({"target": "tools/call", "oracle": "no-crash", "fingerprint": fingerprint,
                "frames": [frame[:-len(str(i))] + str(i)], "i": i})
    if i == 0:
        sys.stdout.write("ready\\n")
        sys.stdout.flush()
"""


def test_sigkill_mid_write_leaves_no_partial_file(tmp_path: Path) -> None:
    """SIGKILL a process saving ~1 MB transcripts at random moments: every file left behind parses."""
    root = tmp_path / "corpus"
    for run in range(5):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(run)], cwd=REPO_ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert writer.stdout is not None
            assert writer.stdout.readline() == b"ready\n", writer.stderr.read() if writer.stderr else ""
            time.sleep(0.3 + 0.05 * run)
            assert writer.poll() is None, "the writer stopped before it was killed"
            os.kill(writer.pid, signal.SIGKILL)
        finally:
            if writer.poll() is None:
                os.kill(writer.pid, signal.SIGKILL)
            writer.wait(timeout=10)
            for stream in (writer.stdout, writer.stderr):
                if stream is not None:
                    stream.close()
        assert writer.returncode == -signal.SIGKILL

    loaded, broken = CorpusStore(root).load_all()
    assert not broken, broken
    assert {data["fingerprint"] for _, data in loaded} >= {"same-0", "same-1", "same-2"}
    for path, data in loaded:
        assert len(data["frames"][0]) == 1_000_000, f"{path.name} holds a cut frame"
        assert data["frames"][0].endswith(str(data["i"]))
    for path in root.glob("*.json"):
        json.loads(path.read_text())  # the manifest too

    # Whatever temp files the kills left are swept once they are old.
    old = time.time() - 120
    for temp in root.glob(".tmp-*"):
        os.utime(temp, (old, old))
    CorpusStore(root).save(transcript())
    assert not list(root.glob(".tmp-*"))


# --- redaction ---------------------------------------------------------------------------------------

TOKENS = [
    "sk-proj-abcdEFGH1234ijklMNOP5678",
    "sk_live_51HabcdEFGH1234ijkl",
    "pk_live_51HabcdEFGH1234ijkl",
    "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "gho_" + "a" * 36,
    "ghs_" + "B" * 36,
    "ghu_" + "c1" * 18,
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "xoxp-1234-5678-abcdef",
    "AKIAIOSFODNN7EXAMPLE",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
]


@pytest.mark.parametrize("token", TOKENS)
def test_token_shapes_are_redacted(token: str) -> None:
    """Each credential shape is replaced, and the surrounding text is kept."""
    assert Redactor().text(f"failed with {token} here") == f"failed with {REDACTED} here"


@pytest.mark.parametrize(("before", "after"), [
    ("Authorization: Bearer abc.DEF-123_456", f"Authorization: Bearer {REDACTED}"),
    ("authorization: bearer 0123456789abcdef", f"authorization: bearer {REDACTED}"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", f"Authorization: Basic {REDACTED}"),
    ("Authorization: Basic abc", f"Authorization: Basic {REDACTED}"),
    ("authorization=bearer lowercaseonly", f"authorization=bearer {REDACTED}"),
    ("https://alice:s3cret@example.com/mcp", f"https://{REDACTED}@example.com/mcp"),
    ("postgres://u:p@db:5432/x", f"postgres://{REDACTED}@db:5432/x"),
    ("GITHUB_TOKEN=abc123456", f"GITHUB_TOKEN={REDACTED}"),
    ("password = 'hunter 2'", f"password = '{REDACTED}'"),
    ("https://x/cb?access_token=abc123&state=ok", f"https://x/cb?access_token={REDACTED}&state=ok"),
    ('{"api_key": "abc", "name": "n"}', f'{{"api_key": "{REDACTED}", "name": "n"}}'),
    ("{'client_secret': 'abc'}", f"{{'client_secret': '{REDACTED}'}}"),
    ('"{\\"apiKey\\": \\"abc\\"}"', f'"{{\\"apiKey\\": \\"{REDACTED}\\"}}"'),
    ("X-Api-Key: abcd1234", f"X-Api-Key: {REDACTED}"),
    ("db passwd: hunter2", f"db passwd: {REDACTED}"),
])
def test_schemes_urls_and_pairs_keep_the_name(before: str, after: str) -> None:
    """Bearer/Basic, URL userinfo and secret-named pairs keep the word or name and hide the value."""
    assert Redactor().text(before) == after


@pytest.mark.parametrize("ordinary", [
    "token limit exceeded",
    "password field required",
    "Invalid password: must be 8 characters",
    "token: expired",
    "Basic authentication is not supported",
    "Bearer token missing",
    "maxTokens=100 total_tokens: 200",
    '{"progressToken": "p-1", "author": "Ada", "authority": "x.example"}',
    "task-1234567890abcdef1234567890 and risk-assessment",
    "see https://example.com:8080/path@v2",
    "auth is fine, a=b c==d",
])
def test_ordinary_text_is_unchanged(ordinary: str) -> None:
    """Prose that merely mentions tokens or passwords, and non-secret names, stays as it was."""
    assert Redactor().text(ordinary) == ordinary


def test_known_secrets_longest_first_and_short_ones_ignored() -> None:
    """Known values go wherever they appear (also JSON-escaped); values under 4 chars are ignored."""
    redactor = Redactor(["hunter2-long", "hunter2", "", "ab", 'q"uote\\d'])
    assert redactor.text("x hunter2-long y hunter2 z ab") == f"x {REDACTED} y {REDACTED} z ab"
    assert redactor.text(json.dumps({"k": 'q"uote\\d'})) == f'{{"k": "{REDACTED}"}}'


def test_value_redacts_nested_structures() -> None:
    """Strings deep inside lists and dicts are redacted; secret-named keys lose their whole value."""
    redactor = Redactor(["s3cr3t-value"])
    data = {
        "frames": ['{"params": {"x": "s3cr3t-value"}}'],
        "headers": {"Authorization": "Bearer whatever", "Accept": "application/json"},
        "env": [{"name": "DB", "auth": {"user": "u", "pass": "p"}}],
        "maxTokens": 100,
        "token": None,
        "nested": [["ghp_" + "z" * 36]],
    }
    assert redactor.value(data) == {
        "frames": [f'{{"params": {{"x": "{REDACTED}"}}}}'],
        "headers": {"Authorization": REDACTED, "Accept": "application/json"},
        "env": [{"name": "DB", "auth": REDACTED}],
        "maxTokens": 100,
        "token": None,
        "nested": [[REDACTED]],
    }


def test_argv_redacts_flags_values_and_known_secrets() -> None:
    """`--token=x`, `--api-key x`, known env values and header values are hidden; the rest is kept."""
    redactor = Redactor(["envvalue123", "hdr-secret-9"])
    argv = ["node", "server.js", "--token=abc123456", "--api-key", "abc123456", "--port", "8080",
            "--env", "MY_VAR=envvalue123", "-H", "X-Custom: hdr-secret-9", "--no-auth", "--verbose"]
    assert redactor.argv(argv) == [
        "node", "server.js", f"--token={REDACTED}", "--api-key", REDACTED, "--port", "8080",
        "--env", f"MY_VAR={REDACTED}", "-H", f"X-Custom: {REDACTED}", "--no-auth", "--verbose"]


@pytest.mark.parametrize(("name", "secret"), [
    ("GITHUB_TOKEN", True), ("client_secret", True), ("Authorization", True), ("passwd", True),
    ("x-api-key", True), ("apiKey", True), ("maxTokens", False), ("progressToken", False),
    ("author", False), ("port", False),
])
def test_secret_names(name: str, secret: bool) -> None:
    """Which names count as credential holders."""
    assert is_secret_name(name) is secret
