"""`mcpfuzz --help` and the first lines of `mcpfuzz run` come before the heavy imports: checked by what is imported
when they are written, never by how long it took."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from rich.console import Console

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import RunStarted
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.report.banner import Banner, write_banner
from mcpfuzz.report.console import ConsoleReporter
from tests.conftest import MCP_SERVER, cli_env

pytestmark = pytest.mark.process

# What neither `--help` nor the run's banner may wait for: the engine's run, the connections, generation, the
# oracles' checks, the console library.
HEAVY = ("httpx", "anyio", "hypothesis", "jsonschema", "rich", "jwt", "mcpfuzz.engine.runner", "mcpfuzz.engine.plan",
         "mcpfuzz.engine.session", "mcpfuzz.engine.searches", "mcpfuzz.engine.events", "mcpfuzz.transport.connect",
         "mcpfuzz.transport.stdio", "mcpfuzz.oracles.base", "mcpfuzz.strategies", "mcpfuzz.report.console")

# Runs the command line in this interpreter with a stdout that notes which modules were loaded when its first line
# was written; the note goes to stderr as JSON once the command ends.
WATCHED = """
import json, sys

HEAVY = tuple(json.loads(sys.argv[1]))


class Watched:
    def __init__(self, stream):
        self.stream = stream
        self.first = None

    def write(self, text):
        if self.first is None and text.strip():
            heavy = sorted(name for name in sys.modules if any(name == h or name.startswith(h + ".") for h in HEAVY))
            self.first = {"text": text, "heavy": heavy}
        return self.stream.write(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)


sys.stdout = watched = Watched(sys.stdout)
sys.argv = ["mcpfuzz", *sys.argv[2:]]
from mcpfuzz.cli import main

try:
    main()
except SystemExit as end:
    status = end.code
sys.stdout.flush()
print(json.dumps({"first": watched.first, "status": status}), file=sys.stderr)
"""


def watched_cli(args: list[str], cwd: str) -> tuple[dict, str]:
    """`mcpfuzz ARGS` run as a user runs it: the first write's note, and the whole stdout."""
    result = subprocess.run([sys.executable, "-c", WATCHED, json.dumps(HEAVY), *args], capture_output=True,
                            text=True, timeout=180, env=cli_env({"PYTHONIOENCODING": "utf-8"}), cwd=cwd,
                            stdin=subprocess.DEVNULL)
    note = json.loads(result.stderr.strip().splitlines()[-1])
    return note, result.stdout


def test_help_lists_the_commands_without_the_engine(tmp_path) -> None:
    note, out = watched_cli(["--help"], str(tmp_path))
    assert note["status"] == 0 and "run" in out and "soak" in out, out
    assert note["first"]["heavy"] == [], note


@pytest.mark.parametrize("options", [
    [],
    # A secret among the command's words is redacted in the early banner as the run's events redact it, and the
    # oracles counted are those the run judges.
    ["--env", "API_TOKEN=s3cr3t-value-42", "--exclude-oracles", "no-hang"],
])
def test_run_writes_its_banner_once_before_the_engine_is_imported(tmp_path, options: list[str]) -> None:
    server = ["env", "API_TOKEN=s3cr3t-value-42", sys.executable, str(MCP_SERVER)] if options else \
        [sys.executable, str(MCP_SERVER)]
    note, out = watched_cli(["run", "--budget", "60", "--timeout", "2", "--phases", "catalogue", "--seed", "5",
                             "--corpus", str(tmp_path / "corpus"), *options, "--", *server], str(tmp_path))
    first = note["first"]
    assert first["heavy"] == [], note
    title, settings = first["text"].splitlines()[:2]
    assert title.startswith("mcpfuzz ") and " · server: " in title, first
    assert settings.startswith("seed 5 · budget 60s · timeout 2s · "), first
    assert "s3cr3t" not in out, out
    # The run went on to its end, and its console did not print the banner again.
    assert "summary" in out, out
    assert out.count(title) == 1 and out.count(settings) == 1, out
    judged = len(OracleId) - 3 - (1 if options else 0)  # without --security or --observe: 3 oracles left out
    assert settings.endswith(f" · {judged} oracles"), settings


class Stream(io.StringIO):
    """A UTF-8 text stream, a terminal or not."""

    encoding = "utf-8"  # type: ignore[assignment]

    def __init__(self, terminal: bool) -> None:
        super().__init__()
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


@pytest.mark.parametrize("terminal, environ", [
    (False, {}),
    (True, {"TERM": "xterm-256color"}),
    (True, {"TERM": "dumb"}),
    (True, {"TERM": "xterm", "NO_COLOR": "1"}),
    (True, {"TERM": "xterm", "TTY_COMPATIBLE": "0"}),
    (False, {"TERM": "xterm", "FORCE_COLOR": "1"}),
    (False, {"TERM": "xterm", "FORCE_COLOR": ""}),
    (False, {"TERM": "xterm", "TTY_COMPATIBLE": "1", "FORCE_COLOR": ""}),
])
@pytest.mark.parametrize("server", ["python server.py --name 'a b'", "python evil\x1b[2J\u202e.py"])
def test_the_early_banner_is_what_the_console_prints(monkeypatch, terminal: bool, environ: dict[str, str],
                                                    server: str) -> None:
    """Written without rich, the banner has the bytes the console reporter's rich console gives it."""
    for name in ("TERM", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "COLORTERM", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    banner = Banner(server, 7, 60.0, 5.0, 36)
    early = Stream(terminal)
    assert write_banner(banner, early, dict(environ))
    console = Stream(terminal)
    monkeypatch.setattr(sys, "stdout", console)
    reporter = ConsoleReporter(RunConfig(["python", "server.py"]))
    reporter.handle(RunStarted(server, 7, tuple(oracle.value for oracle in OracleId)[:36], 60.0, 5.0))
    assert early.getvalue() == console.getvalue()
    assert "\x1b[2J" not in early.getvalue() and "\u202e" not in early.getvalue()


def test_the_console_prints_the_banner_unless_the_same_was_written() -> None:
    banner = Banner("python server.py", 7, 60.0, 5.0, 2)
    for shown, printed in ((banner, ""), (Banner("python other.py", 7, 60.0, 5.0, 2), "server: python server.py")):
        out = Stream(False)
        reporter = ConsoleReporter(RunConfig(["python", "server.py"]), Console(file=out, highlight=False), shown=shown)
        reporter.handle(RunStarted("python server.py", 7, ("no-crash", "no-hang"), 60.0, 5.0))
        assert printed in out.getvalue() and (printed or out.getvalue() == "")


def test_what_only_rich_can_write_is_left_to_it() -> None:
    """A tab rich expands, a line break, a stream that is not UTF-8: nothing written early."""
    assert not write_banner(Banner("python a\tb.py", 1, 1.0, 1.0, 1), Stream(False), {})
    assert not write_banner(Banner("python a\nb.py", 1, 1.0, 1.0, 1), Stream(False), {})
    latin = io.TextIOWrapper(io.BytesIO(), encoding="latin-1")
    assert not write_banner(Banner("python a.py", 1, 1.0, 1.0, 1), latin, {})
    latin.flush()
    assert latin.buffer.getvalue() == b""


def test_the_dash_of_events_is_the_event_logs() -> None:
    from mcpfuzz.cli.reporting import EVENTS_ON_STDOUT
    from mcpfuzz.report.event_log import STDOUT

    assert EVENTS_ON_STDOUT == STDOUT
