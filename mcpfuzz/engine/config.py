"""The options of a run, validated before anything starts."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from mcpfuzz.corpus.redact import REDACTED, Redactor, is_secret_setting
from mcpfuzz.engine.baseline import Baseline
from mcpfuzz.engine.client.capabilities import ALL_CAPABILITIES, ClientCapability
from mcpfuzz.engine.phase_names import PhaseName
from mcpfuzz.engine.shared.options import SharedOptions
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.severity import Severity
from mcpfuzz.transport.base import DEFAULT_STARTUP_TIMEOUT
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.stdio_target import StdioTarget

if TYPE_CHECKING:  # the connections themselves: `mcpfuzz run` builds its configuration before they are imported
    from mcpfuzz.transport.connect import ServerTarget

PHASES = (PhaseName.PROBE, PhaseName.CATALOGUE, PhaseName.LIFECYCLE, PhaseName.COVERAGE, PhaseName.FUZZ,
          PhaseName.STATEFUL)
# The phases that call targets with drawn params.
CALL_PHASES = (PhaseName.COVERAGE, PhaseName.FUZZ, PhaseName.STATEFUL)
# MCP's streamable HTTP rules (status codes, sessions, Origin) do not bind a plain JSON-RPC endpoint.
MCP_TRANSPORT_ORACLES = (OracleId.HTTP_STATUS, OracleId.SESSION_LEAK, OracleId.ORIGIN_CHECK)
# Judged only with --security or --observe: without canaries or a hook in the server they have nothing to see.
SECURITY_ORACLES = (OracleId.SANDBOX_ESCAPE, OracleId.COMMAND_INJECTION, OracleId.NETWORK_EGRESS)


@dataclass(frozen=True)
class Shard:
    """One process's part of a run spread over several (`--workers`): its number and how many there are."""

    index: int = 0
    count: int = 1

    @property
    def lead(self) -> bool:
        """The lead runs what is done once per run (the catalogue, lifecycle, coverage); the others only search."""
        return self.index == 0

    def worker_path(self, path: Path) -> Path:
        """The lead keeps `path`; worker i writes `NAME.worker<i>.EXT` beside it (a frame log, a checkpoint)."""
        return path if self.lead else path.with_name(f"{path.stem}.worker{self.index}{path.suffix}")


@dataclass
class RunConfig:
    """Everything `mcpfuzz run` was asked to do."""

    command: list[str]
    seed: int = 0
    budget: float = 60.0
    timeout: float = 5.0
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT  # a process mcpfuzz started: how long until its first answer
    call_timeout: float = 30.0  # a valid call to a live server: how long before it counts as dropped
    grace: float = 0.25
    oracles: tuple[str, ...] = ()
    fail_on: Severity = Severity.MEDIUM
    protocol_version: str | None = None
    phases: tuple[str, ...] = PHASES
    max_line: int = 8 * 1024 * 1024
    env: dict[str, str] = field(default_factory=dict)
    # Targets by label (`tool/NAME`): a risky one is called only when included; an excluded one never.
    include_targets: tuple[str, ...] = ()
    exclude_targets: tuple[str, ...] = ()
    target_options: tuple[tuple[str, str], ...] = ()  # (label, the option that named it), for warnings
    read_only: bool = False  # call only targets annotated read-only (and those named with --include-target)
    target_timeouts: dict[str, float] = field(default_factory=dict)  # label -> seconds, instead of `timeout`
    # --args: label -> argument objects the user knows to be valid (seeds of the coverage, fuzz and stateful calls)
    known_arguments: dict[str, tuple[dict, ...]] = field(default_factory=dict)
    strict_types: bool = False
    corpus: Path | None = None
    replay_corpus: bool = True
    log_frames: Path | None = None
    max_examples: int | None = None
    http: HttpTarget | None = None  # `mcpfuzz run URL`; then `command` is empty
    sample_every: float = 1.0  # seconds between two resource samples of the server (memory-growth)
    cwd: str | None = None  # --cwd: the stdio server's working directory (None: mcpfuzz's own)
    security: bool = False  # --security: a canary workspace for the server, the sandbox and injection oracles
    coverage: bool = False  # --coverage: a Python stdio server traced, the fuzz phase steered by the lines it reaches
    coverage_sdk: bool = False  # --coverage-sdk: installed packages' lines count too
    observe: bool = False  # --observe: the side effects of each call seen by a hook in the server (no payloads)
    allow_paths: tuple[str, ...] = ()  # --allow-path: folders besides the workspace the server may touch
    baseline: Baseline | None = None  # accepted findings: they do not fail the run; a stale entry does
    # Values from ${VAR} in a config or servers file: they may be credentials wherever they were put.
    known_secrets: tuple[str, ...] = ()
    shared: SharedOptions | None = None  # --shared: one search with other processes through Redis
    # A plain JSON-RPC 2.0 server (`--jsonrpc --openrpc FILE`): its methods, as mcpfuzz.jsonrpc.openrpc reads them.
    jsonrpc_methods: tuple[dict, ...] | None = None
    shard: Shard = Shard()  # `run --workers N`: this process's part of the run
    # --client-capabilities: what the legacy handshake (and each 2026-07-28 call of the client phase) declares.
    client_capabilities: frozenset[ClientCapability] = ALL_CAPABILITIES
    server: ServerTarget | None = None  # a target given as it is (the memory transport in tests), not by command

    @property
    def target(self) -> ServerTarget:
        """What the session talks to: a target given as it is, the HTTP endpoint, or else the stdio command."""
        if self.server is not None:
            return self.server
        if self.http is None:
            return StdioTarget(tuple(self.command), self.cwd, tuple(self.env))
        if self.http.launch and self.env and not self.http.env_names:  # --env goes to the launched server
            return replace(self.http, env_names=tuple(self.env))
        return self.http

    @property
    def secrets(self) -> list[str]:
        """Values never to reach a report or the corpus: --env values that look like secrets (by their name or
        their value; a path never does), the target's (--header values), ${VAR} values, the --shared URL's
        password."""
        env = [value for name, value in self.env.items() if is_secret_setting(name, value)]
        return [*env, *self.target.secrets, *self.known_secrets,
                *(self.shared.secrets if self.shared else ())]

    def public(self) -> RunConfig:
        """This configuration as reports may show it: command, URL and launch redacted, secret values hidden."""
        redactor = Redactor(self.secrets)
        http = self.http
        if http is not None:
            http = replace(http, url=redactor.text(http.url), launch=tuple(redactor.argv(http.launch)),
                           headers=tuple((name, REDACTED) for name, _ in http.headers))
        shared = replace(self.shared, url=self.shared.label) if self.shared is not None else None
        return replace(self, command=redactor.argv(self.command), http=http, env=dict.fromkeys(self.env, REDACTED),
                       shared=shared)

    @property
    def database_root(self) -> Path | None:
        """Where Hypothesis keeps its example database: under the corpus folder."""
        return self.corpus / ".hypothesis" if self.corpus is not None else None

    def judged(self) -> RunConfig:
        """This configuration without the oracles that have nothing to judge in its run (see the tuples above)."""
        left_out = (*(MCP_TRANSPORT_ORACLES if self.jsonrpc_methods is not None else ()),
                    *(SECURITY_ORACLES if not (self.security or self.observe) else ()))
        return replace(self, oracles=tuple(oracle for oracle in self.oracles if oracle not in left_out))

    @property
    def server_label(self) -> str:
        """The server as a shell command line, or its URL."""
        return self.target.label
