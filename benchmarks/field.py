"""Field benchmark: mcpfuzz against a pinned set of real MCP servers from PyPI and npm. Prints one table.

What it measures, per server: how long the server takes to answer its first handshake request, how many
targets it declares, how many mcpfuzz planned and prepared, how many it actually called (a CaseDone event of
phase coverage, fuzz or stateful naming the target), the calls per target (min / median over the targets it
was allowed to call), the share of the run's wall time spent in those three phases, restarts, findings and
their distinct root causes. A run that spends its budget restarting a slow server, or never calls what the
server declares, shows here and not on mcpfuzz's own fast test servers.

Run from a checkout with its virtual environment (`python3 -m venv .venv && .venv/bin/pip install -e .`):
    python3 benchmarks/field.py                         # every server, 60 s each (about 12 minutes)
    python3 benchmarks/field.py --only server-memory --only mcp-server-time --seconds 30
    python3 benchmarks/field.py --mcpfuzz /path/to/other/checkout/.venv/bin/mcpfuzz --json after.json
    python3 benchmarks/field.py --option=--security --option=--coverage   # options for every mcpfuzz run

Servers are installed once into `--cache` (default ~/.cache/mcpfuzz-field): each PyPI server in its own
virtual environment, each npm package with `npm install --prefix`. Every server and mcpfuzz itself run
inside a fresh network, PID and mount namespace (`unshare`, root needed) whose only interface is loopback,
so nothing reaches the network and nothing outlives its row; file tools point at a fresh temporary folder,
and tools that run shell commands, reach the network or delete data are excluded by name.
Each row's events, JSON report and corpus are kept under `--cache`/runs/.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from string import Template
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mcpfuzz-field"
CALL_PHASES = ("coverage", "fuzz", "stateful")
HARD_TIMEOUT_MARGIN = 60.0  # seconds past --seconds before a row's mcpfuzz is killed
STARTUP_TIMEOUT = 60.0  # seconds a server may take to answer its first handshake request
STARTUP_SAMPLES = 3  # starts timed per server; the median is shown (one start on a loaded machine misleads)
SANDBOX = ("unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "mcpfuzz-field", "version": "1"}}}


class Registry(str, Enum):
    """Where a server comes from."""

    PYPI = "pypi"
    NPM = "npm"
    REPO = "repo"  # a test server of this checkout


class Transport(str, Enum):
    """How mcpfuzz talks to the server."""

    STDIO = "stdio"
    HTTP = "streamable HTTP"


@dataclass(frozen=True)
class ServerSpec:
    """One pinned server and how to run it safely.

    `command` (stdio) or `launch` (HTTP, with `{port}`) may use $prefix (the install folder), $scratch (a
    fresh temporary folder), $python (this interpreter) and $repo (this checkout); `env` values too.
    """

    name: str
    registry: Registry
    package: str
    version: str
    sdk: str  # the SDK family, checked by hand; its version is read from the install (see sdk_version)
    command: tuple[str, ...]
    transport: Transport = Transport.STDIO
    url: str = ""
    pins: tuple[str, ...] = ()  # dependencies pinned beside a PyPI package
    env: tuple[tuple[str, str], ...] = ()
    exclude_tools: tuple[str, ...] = ()
    prepare: Callable[[Path], None] | None = None  # sets up the scratch folder before each start
    # With --security: the argument that names the server's allowed folder, given mcpfuzz's workspace instead.
    workspace_arg: str = ""

    @property
    def label(self) -> str:
        """The row's first column."""
        return f"{self.name} {self.version}"


def init_git_repo(scratch: Path) -> None:
    """A scratch repository with one commit, for mcp-server-git's `--repository`."""
    repo = scratch / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("scratch\n")
    git = ["git", "-C", str(repo), "-c", "user.name=field", "-c", "user.email=field@127.0.0.1"]
    for args in (["init", "-q"], ["add", "README.md"], ["commit", "-q", "-m", "first"]):
        subprocess.run([*git, *args], check=True, capture_output=True, timeout=30)


def make_files_dir(scratch: Path) -> None:
    """An allowed folder with a file and a subfolder, for server-filesystem."""
    files = scratch / "files"
    (files / "sub").mkdir(parents=True)
    (files / "note.txt").write_text("hello\n")


NPM_BIN = "$prefix/node_modules/.bin"
WORKSPACE = "{workspace}"  # mcpfuzz --security puts its temporary workspace's path here
# gzip-file-as-resource fetches a URL; get-env answers with the whole environment, which a report would keep.
EVERYTHING_EXCLUDED = ("gzip-file-as-resource", "get-env")
SERVERS: tuple[ServerSpec, ...] = (
    ServerSpec("server-everything", Registry.NPM, "@modelcontextprotocol/server-everything", "2026.8.31",
               "TypeScript", (f"{NPM_BIN}/mcp-server-everything", "stdio"), exclude_tools=EVERYTHING_EXCLUDED),
    ServerSpec("server-everything", Registry.NPM, "@modelcontextprotocol/server-everything", "2026.8.31",
               "TypeScript", ("env", "PORT={port}", f"{NPM_BIN}/mcp-server-everything", "streamableHttp"),
               transport=Transport.HTTP, url="http://127.0.0.1:{port}/mcp", exclude_tools=EVERYTHING_EXCLUDED),
    ServerSpec("server-filesystem", Registry.NPM, "@modelcontextprotocol/server-filesystem", "2026.8.31",
               "TypeScript", (f"{NPM_BIN}/mcp-server-filesystem", "$scratch/files"), prepare=make_files_dir,
               workspace_arg="$scratch/files",
               exclude_tools=("write_file", "edit_file", "move_file")),
    ServerSpec("server-memory", Registry.NPM, "@modelcontextprotocol/server-memory", "2026.8.31",
               "TypeScript", (f"{NPM_BIN}/mcp-server-memory",),
               env=(("MEMORY_FILE_PATH", "$scratch/memory.jsonl"),),
               exclude_tools=("delete_entities", "delete_observations", "delete_relations")),
    ServerSpec("server-sequential-thinking", Registry.NPM, "@modelcontextprotocol/server-sequential-thinking",
               "2026.8.31", "TypeScript", (f"{NPM_BIN}/mcp-server-sequential-thinking",)),
    ServerSpec("mcp-server-time", Registry.PYPI, "mcp-server-time", "2026.10.19", "Python (mcp)",
               ("$prefix/venv/bin/mcp-server-time", "--local-timezone", "UTC"), pins=("mcp==2.3.0",)),
    ServerSpec("mcp-server-git", Registry.PYPI, "mcp-server-git", "2026.10.19", "Python (mcp)",
               ("$prefix/venv/bin/mcp-server-git", "--repository", "$scratch/repo"), pins=("mcp==2.3.0",),
               prepare=init_git_repo, exclude_tools=("git_reset",)),
    ServerSpec("mcp-server-calculator", Registry.PYPI, "mcp-server-calculator", "0.2.1", "Python (mcp FastMCP)",
               ("$prefix/venv/bin/mcp-server-calculator",), pins=("mcp==1.30.0",)),
    ServerSpec("mcp-time", Registry.NPM, "mcp-time-linux-x64", "0.4.0", "Go (mark3labs/mcp-go)",
               ("$prefix/node_modules/mcp-time-linux-x64/bin/mcp-time",)),
    # Tools that add or run tasks would schedule shell commands, HTTP calls or LLM calls: never called.
    ServerSpec("mcp-cron", Registry.NPM, "mcp-cron-linux-amd64", "0.9.1", "Go (modelcontextprotocol/go-sdk)",
               ("$prefix/node_modules/mcp-cron-linux-amd64/bin/mcp-cron", "-transport", "stdio",
                "-db-path", "$scratch/results.db", "-mcp-config-path", "$scratch/mcp.json",
                "-log-file", "$scratch/cron.log"),
               exclude_tools=("add_task", "add_ai_task", "add_http_task", "update_task", "run_task", "remove_task")),
    ServerSpec("slow_many_tools.py", Registry.REPO, "tests/servers/slow_many_tools.py", "(repo)", "none (fixture)",
               ("$python", "$repo/tests/servers/slow_many_tools.py")),
)


# ---------------------------------------------------------------- processes: started in groups, always ended

_STARTED: list[subprocess.Popen[bytes]] = []


def start(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start a process in a group of its own and remember it, so every exit path can end it."""
    process = subprocess.Popen(list(argv), start_new_session=True, **kwargs)
    _STARTED.append(process)
    return process


def end(process: subprocess.Popen[bytes]) -> None:
    """Kill the process's whole group (the sandbox's --kill-child then ends everything inside it)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
    if process in _STARTED:
        _STARTED.remove(process)


def end_all() -> None:
    """End every process this script started and has not ended yet."""
    for process in list(_STARTED):
        end(process)


def on_signal(signum: int, _frame: object) -> None:
    """A terminal's Ctrl-C or a kill ends the started processes before the script goes."""
    end_all()
    raise SystemExit(128 + signum)


@dataclass(frozen=True)
class Confinement:
    """What a sandbox adds to its namespaces: a read-only file system but for some folders, a list of leftovers.

    With `writable`, the root file system is remounted read-only inside the mount namespace, /tmp is a fresh
    tmpfs, the named folders (none under /tmp) stay writable, HOME is the first of them and the command runs
    there: a fuzzed tool that writes at a path it was handed can touch nothing else. With `leftovers`, once
    the command exits the processes of the PID namespace still alive (after a second's grace) are written
    there, one `pid command line` a line, before the namespace's end kills them.
    """

    writable: tuple[Path, ...] = ()
    leftovers: Path | None = None

    def script(self) -> str:
        """The shell script that sets the namespaces up and runs "$@"."""
        steps = ["ip link set lo up"]
        if self.writable:
            steps.append("mount -t tmpfs tmpfs /tmp")
            steps += [f"mount --bind {shlex.quote(str(folder))} {shlex.quote(str(folder))}" for folder in self.writable]
            steps.append("mount -o remount,bind,ro /")
            home = shlex.quote(str(self.writable[0]))
            steps.append(f"export HOME={home} && cd {home}")
        if self.leftovers is None:
            return " && ".join([*steps, '"$@"'])
        listing = ('for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = $$ ] && continue; '
                   '[ -r "$d/cmdline" ] && echo "$p $(tr \'\\000\\n\' \'  \' < "$d/cmdline" | cut -c1-300)"; done')
        return (" && ".join(steps) + ' && { "$@"; status=$?; sleep 1; '
                f"{{ {listing}; }} > {shlex.quote(str(self.leftovers))}; exit $status; }}")


def sandboxed(argv: Sequence[str], confinement: Confinement = Confinement()) -> list[str]:
    """argv run in new network, PID and mount namespaces with only loopback up (and the confinement asked)."""
    return [*SANDBOX, "sh", "-c", confinement.script(), "sh", *argv]


# ---------------------------------------------------------------- installing

def install_dir(spec: ServerSpec, cache: Path) -> Path:
    """Where one pinned package lives in the cache."""
    if spec.registry is Registry.REPO:
        return ROOT
    safe = spec.package.replace("/", "+")
    pinned = "".join(f"+{pin}" for pin in spec.pins)  # the same package beside other pins is another install
    return cache / spec.registry.value / f"{safe}@{spec.version}{pinned}"


def install(spec: ServerSpec, cache: Path) -> Path:
    """Install the pinned package once; a folder with a `.installed` mark is reused as it is."""
    prefix = install_dir(spec, cache)
    mark = prefix / ".installed"
    if spec.registry is Registry.REPO or mark.exists():
        return prefix
    if prefix.exists():
        shutil.rmtree(prefix)  # a half-done install from an earlier, interrupted run
    prefix.mkdir(parents=True)
    if spec.registry is Registry.PYPI:
        subprocess.run([sys.executable, "-m", "venv", str(prefix / "venv")], check=True, timeout=300)
        pip = [str(prefix / "venv" / "bin" / "pip"), "install", "-q", f"{spec.package}=={spec.version}", *spec.pins]
        subprocess.run(pip, check=True, timeout=900)
    else:
        npm = ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(prefix),
               f"{spec.package}@{spec.version}"]
        subprocess.run(npm, check=True, timeout=900)
    mark.write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ\n", time.gmtime()))
    return prefix


GO_SDK = re.compile(rb"dep\t(github\.com/(?:modelcontextprotocol/go-sdk|mark3labs/mcp-go))\t(v[0-9][^\t\s]*)")


def sdk_version(spec: ServerSpec, prefix: Path, argv: Sequence[str]) -> str:
    """The SDK family and the version actually installed (read from the install, not assumed)."""
    if spec.registry is Registry.PYPI:
        found = sorted(prefix.glob("venv/lib/python*/site-packages/mcp-*.dist-info"))
        return f"{spec.sdk} {found[0].name.removesuffix('.dist-info').split('-', 1)[1]}" if found else spec.sdk
    if spec.registry is Registry.NPM and spec.sdk.startswith("TypeScript"):
        manifest = prefix / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
        version = json.loads(manifest.read_text())["version"] if manifest.exists() else "?"
        return f"{spec.sdk} {version}"
    if spec.sdk.startswith("Go"):
        match = GO_SDK.search(Path(argv[0]).read_bytes())  # the Go build info the toolchain embeds
        return f"Go {match.group(1).decode().split('/', 1)[1]} {match.group(2).decode()}" if match else spec.sdk
    return spec.sdk


# ---------------------------------------------------------------- one server's setting

@dataclass(frozen=True)
class Setting:
    """A spec resolved for one run: its argv (or launch line and URL), environment and scratch folder."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    scratch: Path


def resolve(spec: ServerSpec, prefix: Path, scratch: Path) -> Setting:
    """Fill the placeholders of a spec's command and environment."""
    values = {"prefix": str(prefix), "scratch": str(scratch), "python": sys.executable, "repo": str(ROOT)}
    argv = tuple(Template(part).safe_substitute(values) for part in spec.command)
    env = tuple((name, Template(value).safe_substitute(values)) for name, value in spec.env)
    return Setting(argv, env, scratch)


def fresh_scratch(spec: ServerSpec, parent: Path) -> Path:
    """A new empty folder for the server's files, set up as the spec says."""
    scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=parent))
    if spec.prepare is not None:
        spec.prepare(scratch)
    return scratch


def free_port() -> int:
    """A port free on loopback now (inside a fresh namespace every port is)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# ---------------------------------------------------------------- start-up time (runs inside the sandbox)

def time_stdio_start(argv: Sequence[str], env: dict[str, str], deadline: float) -> float:
    """Seconds from spawning a stdio server to the first line it answers `initialize` with."""
    began = time.monotonic()
    server = start(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        server.stdin.flush()
        out, buffered = server.stdout.fileno(), b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([out], [], [], max(0.0, min(0.5, deadline - time.monotonic())))
            if not ready:
                continue
            chunk = os.read(out, 65536)
            if not chunk:
                raise RuntimeError(f"the server closed stdout (status {server.wait(5)}) before answering")
            buffered += chunk
            if any(answers_initialize(line) for line in buffered.split(b"\n")[:-1]):
                return time.monotonic() - began
        raise TimeoutError("no answer to initialize")
    finally:
        end(server)


def answers_initialize(line: bytes) -> bool:
    """Whether a stdout line is the answer (result or error) to the probe's `initialize`."""
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("id") == 1


def time_http_start(launch: Sequence[str], url: str, env: dict[str, str], deadline: float) -> float:
    """Seconds from launching an HTTP server to its first HTTP answer to a POSTed `initialize`."""
    body = json.dumps(INITIALIZE).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    began = time.monotonic()
    server = start(launch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise RuntimeError(f"the server exited with status {server.returncode} before answering")
            try:
                with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=5) as answer:
                    answer.read(1)
                return time.monotonic() - began
            except urllib.error.HTTPError:
                return time.monotonic() - began  # an HTTP error status is an answer too
            except OSError:
                time.sleep(0.02)
        raise TimeoutError("no answer to initialize")
    finally:
        end(server)


def startup_probe_main(request_json: str) -> int:
    """The `_startup` entry point: time one start as asked, print {"seconds": ...} or {"error": ...}."""
    request = json.loads(request_json)
    env = {**os.environ, **dict(request["env"])}
    deadline = time.monotonic() + STARTUP_TIMEOUT
    try:
        if request["url"]:
            port = free_port()
            launch = [part.replace("{port}", str(port)) for part in request["argv"]]
            seconds = time_http_start(launch, request["url"].replace("{port}", str(port)), env, deadline)
        else:
            seconds = time_stdio_start(request["argv"], env, deadline)
        print(json.dumps({"seconds": round(seconds, 3)}))
    except Exception as error:  # any failure is the row's to show, not a crash of the benchmark
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
    finally:
        end_all()
    return 0


def measure_startup(spec: ServerSpec, setting: Setting) -> tuple[float | None, str]:
    """Start the server once in the sandbox and time its first handshake answer: (seconds, error)."""
    request = json.dumps({"argv": setting.argv, "env": setting.env, "url": spec.url})
    argv = sandboxed([sys.executable, str(Path(__file__).resolve()), "_startup", request])
    probe = start(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=setting.scratch)
    try:
        out, _ = probe.communicate(timeout=STARTUP_TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        return None, "start-up probe timed out"
    finally:
        end(probe)
    try:
        answer = json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, "start-up probe printed nothing"
    return answer.get("seconds"), answer.get("error", "")


# ---------------------------------------------------------------- the run

@dataclass(frozen=True)
class RunFiles:
    """Where one row's mcpfuzz writes."""

    folder: Path

    @property
    def events(self) -> Path:
        return self.folder / "events.jsonl"

    @property
    def report(self) -> Path:
        return self.folder / "report.json"

    @property
    def console(self) -> Path:
        return self.folder / "console.txt"

    @property
    def corpus(self) -> Path:
        return self.folder / "corpus"


def mcpfuzz_argv(mcpfuzz: Path, spec: ServerSpec, setting: Setting, files: RunFiles, options: Options) -> list[str]:
    """The mcpfuzz command line of one row."""
    argv = [str(mcpfuzz), "run", "--budget", str(options.seconds), "--seed", str(options.seed),
            "--corpus", str(files.corpus), "--events", str(files.events), "--json", str(files.report), "-q"]
    for tool in spec.exclude_tools:
        argv += ["--exclude-tool", tool]
    for name, value in setting.env:
        argv += ["--env", f"{name}={value}"]
    argv += options.extra
    if spec.transport is Transport.HTTP:
        return [*argv, "--launch", shlex.join(setting.argv), spec.url]
    if "--security" in options.extra:
        # The canary oracles need the server in mcpfuzz's own workspace: started there, and told so where it
        # takes its allowed folder as an argument.
        folder = spec.workspace_arg.replace("$scratch", str(setting.scratch))
        command = [WORKSPACE if spec.workspace_arg and word == folder else word for word in setting.argv]
        return [*argv, "--", *command]
    return [*argv, "--cwd", str(setting.scratch), "--", *setting.argv]


def run_mcpfuzz(argv: Sequence[str], files: RunFiles, timeout: float,
                confinement: Confinement = Confinement()) -> tuple[int | None, float]:
    """Run mcpfuzz in the sandbox with a hard timeout: (exit status or None when killed, seconds)."""
    began = time.monotonic()
    with files.console.open("wb") as console:
        process = start(sandboxed(argv, confinement), stdout=console, stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL)
        try:
            status: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            status = None
        finally:
            end(process)
    return status, time.monotonic() - began


# ---------------------------------------------------------------- reading the events

@dataclass
class Row:
    """One server's figures: the table's row and the JSON written with --json."""

    server: str
    sdk: str
    transport: str
    startup_s: float | None
    declared: int = 0
    prepared: int = 0
    called: int = 0
    calls_min: int | None = None
    calls_median: float | None = None
    call_share: float | None = None
    restarts: int | None = None
    findings: int = 0
    sdk_marked: int = 0
    root_causes: int = 0
    exit_status: int | None = None
    wall_s: float = 0.0
    note: str = ""
    calls: dict[str, int] = field(default_factory=dict)
    uncalled: dict[str, str] = field(default_factory=dict)  # target: why (TargetsPlanned's reason, or none)
    finding_list: list[dict[str, Any]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # mcpfuzz's warnings during the run
    phase_seconds: dict[str, float] = field(default_factory=dict)
    startup_samples: list[float] = field(default_factory=list)
    command: str = ""


def read_events(path: Path) -> list[dict[str, Any]]:
    """The events mcpfuzz wrote, one JSON object a line (a line cut short by a kill is skipped)."""
    if not path.exists():
        return []
    events = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def of_type(events: list[dict[str, Any]], name: str) -> Iterator[dict[str, Any]]:
    """The events of one type, in order."""
    return (event for event in events if event.get("event") == name)


def phase_seconds(events: list[dict[str, Any]]) -> dict[str, float]:
    """Seconds spent in each phase: from its PhaseStarted to the next one, or to RunFinished."""
    finished = next(of_type(events, "RunFinished"), None)
    phases = list(of_type(events, "PhaseStarted"))
    if finished is None:
        return {}
    ends = [phase["timestamp"] for phase in phases[1:]] + [finished["timestamp"]]
    spent: Counter[str] = Counter()
    for phase, end_ts in zip(phases, ends, strict=True):
        spent[phase["name"]] += end_ts - phase["timestamp"]
    return {name: round(seconds, 2) for name, seconds in spent.items()}


def call_share(events: list[dict[str, Any]]) -> float | None:
    """Share of the run's wall time in the phases that call targets (a phase lasts until the next starts)."""
    started = next(of_type(events, "RunStarted"), None)
    finished = next(of_type(events, "RunFinished"), None)
    if started is None or finished is None:
        return None
    total = finished["timestamp"] - started["timestamp"]
    calling = sum(seconds for name, seconds in phase_seconds(events).items() if name in CALL_PHASES)
    return calling / total if total > 0 else None


def target_calls(events: list[dict[str, Any]], targets: set[str]) -> Counter[str]:
    """Calls per target: CaseDone events of a calling phase whose case names one of the targets."""
    calls: Counter[str] = Counter()
    for event in of_type(events, "CaseDone"):
        target = event.get("case", {}).get("target")
        if event.get("phase") in CALL_PHASES and target in targets:
            calls[target] += 1
    return calls


NOT_OURS = ("annotated", "excluded", "--exclude")  # skip reasons that are the user's or the server's choice


def eligible(reason: str) -> bool:
    """Whether a skipped target was one mcpfuzz should have called (not excluded, not annotated risky)."""
    return not any(word in reason for word in NOT_OURS)


def root_cause(finding: dict[str, Any]) -> tuple[str, str]:
    """What makes two findings one cause: oracle and fingerprint; stdout noise has one writer, the server (reports
    of earlier versions listed a finding per line template)."""
    if finding.get("oracle") == "stdout-clean" and finding.get("severity") != "low":
        return ("stdout-clean", "the server's stdout")
    return (str(finding.get("oracle")), str(finding.get("fingerprint") or finding.get("message")))


def summarise_finding(finding: dict[str, Any]) -> dict[str, Any]:
    """The parts of a finding a reader judges it by."""
    return {key: finding.get(key) for key in ("oracle", "severity", "target", "message", "case", "expected",
                                             "received", "fingerprint", "upstream", "also_on", "corpus_path")}


def read_findings(report: Path, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run's findings: from the JSON report, or from FindingFound events when a kill left no report."""
    try:
        return list(json.loads(report.read_text())["findings"])
    except (OSError, ValueError, KeyError):
        return [event["finding"] for event in of_type(events, "FindingFound")]


def planned_targets(events: list[dict[str, Any]], excluded: set[str]) -> tuple[list[str], dict[str, str]]:
    """(targets planned, skipped target -> reason); a run that ended before planning has its tools skipped."""
    planned = next(of_type(events, "TargetsPlanned"), None)
    if planned is not None:
        return list(planned["fuzzed"]), {target: reason for target, reason in planned["skipped"]}
    probe = next(of_type(events, "ProbeDone"), {})
    tools = [f"tool/{name}" for name in probe.get("tools", [])]
    return [], {t: "--exclude-tool" if t in excluded else "never planned: the run ended before planning" for t in tools}


def fill_targets(row: Row, events: list[dict[str, Any]], excluded: set[str]) -> None:
    """Targets declared, prepared and called, calls per target, and why the uncalled ones were not."""
    fuzzed, skipped = planned_targets(events, excluded)
    targets = set(fuzzed) | set(skipped)
    calls = target_calls(events, targets)
    callable_targets = set(fuzzed) | {t for t, reason in skipped.items() if eligible(reason)}
    counts = [calls.get(target, 0) for target in callable_targets]
    row.declared, row.prepared, row.called = len(targets), len(fuzzed), len(calls)
    row.calls = dict(sorted(calls.items()))
    row.uncalled = {t: skipped.get(t, "planned, never called") for t in sorted(targets - set(calls))}
    row.calls_min = min(counts) if counts else None
    row.calls_median = statistics.median(counts) if counts else None


def fill_findings(row: Row, findings: list[dict[str, Any]]) -> None:
    """Findings, those marked as their SDK's known behaviour, and distinct root causes."""
    row.findings = len(findings)
    row.sdk_marked = sum(1 for finding in findings if finding.get("upstream"))
    row.root_causes = len({root_cause(finding) for finding in findings})
    row.finding_list = [summarise_finding(finding) for finding in findings]


def fill_from_run(row: Row, files: RunFiles, excluded: set[str]) -> None:
    """Everything a row reads from one run's events and report."""
    events = read_events(files.events)
    fill_targets(row, events, excluded)
    row.notices = [event["message"] for event in of_type(events, "Notice") if event.get("level") == "warning"]
    row.call_share = call_share(events)
    row.phase_seconds = phase_seconds(events)
    fill_findings(row, read_findings(files.report, events))
    finished = next(of_type(events, "RunFinished"), None)
    if finished is None:
        row.note = row.note or "no RunFinished event"
        return
    row.restarts = finished.get("stats", {}).get("restarts")
    if finished.get("error"):
        row.note = str(finished["error"])[:120]


# ---------------------------------------------------------------- one row, the table

@dataclass(frozen=True)
class Options:
    """The benchmark's settings."""

    cache: Path
    seconds: float
    seed: int
    mcpfuzz: Path
    only: tuple[str, ...]
    runs: Path
    json_out: Path | None
    extra: tuple[str, ...] = ()  # more mcpfuzz run options, e.g. --security, --coverage


def time_starts(spec: ServerSpec, prefix: Path, folder: Path) -> tuple[list[float], str]:
    """Time STARTUP_SAMPLES starts, each on fresh files: (the seconds measured, the last error)."""
    samples, error = [], ""
    for _ in range(STARTUP_SAMPLES):
        seconds, error = measure_startup(spec, resolve(spec, prefix, fresh_scratch(spec, folder)))
        if seconds is None:
            break
        samples.append(seconds)
    return samples, error


def bench_server(spec: ServerSpec, options: Options) -> Row:
    """Install, time the start-up, run mcpfuzz and read its events, for one server."""
    prefix = install(spec, options.cache)
    files = RunFiles(options.runs / f"{spec.name}-{spec.transport.name.lower()}")
    files.folder.mkdir(parents=True)
    samples, error = time_starts(spec, prefix, files.folder)
    setting = resolve(spec, prefix, fresh_scratch(spec, files.folder))  # mcpfuzz gets untouched files
    startup = statistics.median(samples) if samples else None
    row = Row(spec.label, sdk_version(spec, prefix, setting.argv), spec.transport.value, startup, note=error,
              startup_samples=samples)
    argv = mcpfuzz_argv(options.mcpfuzz, spec, setting, files, options)
    row.command = shlex.join(argv)
    row.exit_status, row.wall_s = run_mcpfuzz(argv, files, options.seconds + HARD_TIMEOUT_MARGIN)
    if row.exit_status is None:
        row.note = f"killed after {options.seconds + HARD_TIMEOUT_MARGIN:.0f} s"
    elif row.exit_status not in (0, 1):
        row.note = row.note or f"mcpfuzz exit {row.exit_status}"
    fill_from_run(row, files, {f"tool/{name}" for name in spec.exclude_tools})
    return row


COLUMNS = ("server", "SDK", "transport", "start s", "targets decl/prep/called", "calls/target min/med",
           "calling share", "restarts", "findings (SDK)", "root causes", "note")


def cells(row: Row) -> tuple[str, ...]:
    """A row as the table's text cells."""
    def number(value: float | None, form: str = "{:.0f}") -> str:
        return "-" if value is None else form.format(value)
    return (row.server, row.sdk, row.transport, number(row.startup_s, "{:.2f}"),
            f"{row.declared}/{row.prepared}/{row.called}",
            f"{number(row.calls_min)}/{number(row.calls_median)}", number(row.call_share, "{:.0%}"),
            number(row.restarts), f"{row.findings} ({row.sdk_marked})", str(row.root_causes), row.note)


def table(rows: Sequence[Row]) -> str:
    """The rows as a markdown table."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells(row)) + " |" for row in rows]
    return "\n".join(lines)


def portable(text: str, options: Options) -> str:
    """Text with this machine's folders named as a reader anywhere can: cache, checkouts, home."""
    measured = options.mcpfuzz.resolve().parent.parent.parent
    folders = ((options.cache, "$CACHE"), (measured, "$MCPFUZZ_CHECKOUT"), (ROOT, "$CHECKOUT"), (Path.home(), "~"))
    for folder, name in folders:
        text = text.replace(str(folder.resolve()), name)
    return text


def uncalled_summary(row: Row) -> str:
    """One line: how many targets went uncalled, by reason."""
    reasons = Counter(row.uncalled.values())
    return f"{row.server} ({row.transport}): " + (", ".join(f"{n} {why}" for why, n in reasons.most_common())
                                                  or "every target called")


def load() -> str:
    """The machine's load as `uptime` prints it (the machine may be shared)."""
    return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()


def mcpfuzz_revision(mcpfuzz: Path) -> str:
    """The checkout's HEAD, and the last commit that changed its code (mcpfuzz/, strategies/)."""
    git = ["git", "-C", str(mcpfuzz.resolve().parent.parent.parent), "log", "-1", "--format=%h"]
    head = subprocess.run(git, capture_output=True, text=True, timeout=10).stdout.strip()
    code = subprocess.run([*git, "--", "mcpfuzz", "strategies"], capture_output=True, text=True, timeout=10)
    return f"{head or 'unknown'}, code of {code.stdout.strip() or 'unknown'}"


def selected(only: tuple[str, ...]) -> list[ServerSpec]:
    """The servers to run: all, or those whose name (or name and transport) was named with --only."""
    if not only:
        return list(SERVERS)
    return [spec for spec in SERVERS if spec.name in only or f"{spec.name}/{spec.transport.name.lower()}" in only]


def parse_args(argv: Sequence[str]) -> Options:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="install folder (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=60.0, help="mcpfuzz --budget per server")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mcpfuzz", type=Path, default=ROOT / ".venv" / "bin" / "mcpfuzz",
                        help="the mcpfuzz to measure (default: this checkout's)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only this server (repeatable; NAME/http or NAME/stdio picks one transport)")
    parser.add_argument("--json", type=Path, help="write the table's data here")
    parser.add_argument("--option", action="append", default=[], metavar="OPT",
                        help="pass this option to every mcpfuzz run (repeatable, e.g. --option=--security)")
    parser.add_argument("--list", action="store_true", help="list the servers and exit")
    parser.add_argument("--install-only", action="store_true", help="install the selected servers and exit")
    args = parser.parse_args(argv)
    if args.list:
        for spec in SERVERS:
            where = f"{spec.registry.value}:{spec.package}=={spec.version}"
            print(f"{spec.name:28} {spec.transport.name.lower():6} {where}")
        raise SystemExit(0)
    if not args.mcpfuzz.exists():
        parser.error(f"--mcpfuzz {args.mcpfuzz}: no such file (make the checkout's .venv, or name another)")
    if not selected(tuple(args.only)):
        parser.error(f"--only {args.only}: no such server (see --list)")
    if args.install_only:
        for spec in selected(tuple(args.only)):
            print(f"{spec.label}: {install(spec, args.cache)}", flush=True)
        raise SystemExit(0)
    runs = args.cache / "runs" / time.strftime("%Y%m%dT%H%M%S")
    return Options(args.cache, args.seconds, args.seed, args.mcpfuzz, tuple(args.only), runs, args.json,
                   tuple(args.option))


def main(argv: Sequence[str]) -> int:
    """Run every selected server and print the table."""
    if argv[:1] == ["_startup"]:
        return startup_probe_main(argv[1])
    options = parse_args(argv)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    atexit.register(end_all)
    load_before = load()
    print(f"mcpfuzz {options.mcpfuzz} ({mcpfuzz_revision(options.mcpfuzz)}), {options.seconds:g} s each, "
          f"seed {options.seed}; runs kept in {options.runs}\nload before: {load_before}", flush=True)
    rows = []
    for spec in selected(options.only):
        print(f"... {spec.label} ({spec.transport.value})", flush=True)
        rows.append(bench_server(spec, options))
    load_after = load()
    print(f"\n{table(rows)}\n\nload after: {load_after}\n\ntargets not called:")
    for row in rows:
        print(f"  {uncalled_summary(row)}")
    if options.json_out is not None:
        data = {"mcpfuzz": str(options.mcpfuzz), "revision": mcpfuzz_revision(options.mcpfuzz),
                "seconds": options.seconds, "seed": options.seed, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                time.gmtime()), "load_before": load_before, "load_after": load_after, "cpus": os.cpu_count(),
                "rows": [asdict(row) for row in rows]}
        options.json_out.write_text(portable(json.dumps(data, indent=1), options) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
