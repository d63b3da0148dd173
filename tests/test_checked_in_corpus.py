"""The repository's own corpus (corpus/): every transcript still FAILS on the server it came from, and reads well."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mcpfuzz.corpus.store import CorpusStore
from tests.conftest import CLI, REPO_ROOT, cli_env
from tests.http_servers import mcp1_python

pytestmark = pytest.mark.slow

CORPUS = REPO_ROOT / "corpus"
SDK_SERVERS = REPO_ROOT / "tests" / "sdk_servers"
FOLDERS = ("example", "mcp-python-2.3.0", "mcp-python-1.30.0")
REQUIRED = {"target", "oracle", "fingerprint", "severity", "message", "expected", "received", "frames", "case",
            "server", "seed", "format", "mcpfuzz_version"}
MACHINE_PATHS = re.compile(r"/(?:work|tmp|root|home|Users)/")


def server_for(folder: str) -> list[str] | None:
    """The server each folder's transcripts came from, started with this machine's interpreters (None: no mcp 1.x
    environment here)."""
    if folder == "example":
        return [sys.executable, "-m", "mcpfuzz.example"]
    if folder == "mcp-python-2.3.0":
        return [sys.executable, str(SDK_SERVERS / "sdk2_server.py")]
    python = mcp1_python()
    return None if python is None else [python, str(SDK_SERVERS / "sdk1_server.py")]


def transcripts(folder: str) -> list[tuple[Path, dict]]:
    good, broken = CorpusStore(CORPUS / folder).load_all()
    assert not broken, broken
    return good


def test_every_transcript_still_fails_on_its_server() -> None:
    """Replayed on a fresh server of the same code, every transcript is FAILED (exit 1): the bugs are real.

    The three folders are replayed at once: each replay spends most of its time waiting for answers that never
    come (the silences the transcripts hold), not computing."""
    servers = {folder: server_for(folder) for folder in FOLDERS}
    # The default --timeout (5 s): in the modern era no handshake waits for the server to be up, and a server
    # still importing its SDK on a busy machine must not be mistaken for a fixed one.
    replays = {folder: subprocess.Popen([*CLI, "replay", str(CORPUS / folder), "--", *server],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                        text=True, env=cli_env(), cwd=tempfile.mkdtemp(prefix="mcpfuzz-cli-"))
               for folder, server in servers.items() if server is not None}
    try:
        outputs = {folder: replay.communicate(timeout=300) for folder, replay in replays.items()}
    finally:
        for replay in replays.values():
            replay.kill()
    for folder, (stdout, stderr) in outputs.items():
        count = len(transcripts(folder))
        assert count >= 5, folder
        assert replays[folder].returncode == 1, f"{folder}:\n{stdout}{stderr}"
        assert f"replayed {count} transcripts: 0 fixed, {count} failed, 0 error" in stdout, f"{folder}:\n{stdout}"
    if len(replays) < len(FOLDERS):
        pytest.skip("no mcp 1.x environment: .ci/run creates .venv-mcp1 (or set MCPFUZZ_MCP1_PYTHON)")


@pytest.mark.parametrize("folder", FOLDERS)
def test_transcripts_are_in_the_documented_format(folder: str) -> None:
    """Each file: the report contract's fields, named after its target, oracle and fingerprint, no machine paths,
    a relative server command, and listed in corpus/README.md."""
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    for path, data in transcripts(folder):
        assert set(data) >= REQUIRED, f"{path.name}: missing {REQUIRED - set(data)}"
        assert data["format"] == 1 and data["status"] == "failing"
        assert path.name == f"{data['target'].replace('/', '-')}_{data['oracle']}_{data['fingerprint']}.json"
        text = path.read_text(encoding="utf-8")
        assert not MACHINE_PATHS.search(text), f"{path.name} holds a path of the machine that wrote it"
        assert not any(Path(word).is_absolute() for word in data["server"]["command"])
        # The legacy era's handshake comes first; the modern era has none, so one frame may be all.
        assert data["frames"] and all(isinstance(frame, str) for frame in data["frames"])
        assert f"{path.name.rsplit('_', 1)[0]}_*" in readme, f"{path.name} is not described in corpus/README.md"
    manifest = json.loads((CORPUS / folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["format"] == 1


def test_a_replay_against_a_server_that_dies_at_once_is_an_error_not_fixed(tmp_path: Path) -> None:
    """A dead server proves nothing about an invalid-params transcript: ERROR (exit 2), never FIXED."""
    transcript = next((Path(__file__).resolve().parent.parent / "corpus" / "mcp-python-2.3.0").glob(
        "params-string_invalid-params_*.json"))
    result = subprocess.run([sys.executable, "-m", "mcpfuzz.cli", "replay", str(transcript), "--",
                             sys.executable, "-c", "import sys; sys.exit(1)"],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "ERROR" in result.stdout and "FIXED" not in result.stdout
