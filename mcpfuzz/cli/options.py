"""What `run` and `soak` share: the server and report options, their checks, the config."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import click

from mcpfuzz.cli.auth_options import AUTH_OPTIONS, with_auth
from mcpfuzz.cli.durations import Seconds
from mcpfuzz.cli.shared_options import SHARED_OPTIONS, shared_from_options
from mcpfuzz.transport.base import AUTO, TRANSPORT_CHOICES

if TYPE_CHECKING:
    from pathlib import Path

    from mcpfuzz.engine.baseline import Baseline
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.events import RunFinished
    from mcpfuzz.transport.http_target import HttpTarget

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SEVERITIES = ("low", "medium", "high", "critical")
# The phases after the probe, in the order they run (mcpfuzz.engine.config.PHASES; kept here for a fast --help).
RUN_PHASES = ("catalogue", "lifecycle", "coverage", "fuzz", "stateful")


def _oracle_ids() -> list[str]:
    """Every oracle id in the registry's order (which registers each exactly once), without importing the oracles."""
    from mcpfuzz.jsonrpc.oracle_ids import OracleId

    return [oracle_id.value for oracle_id in OracleId]


def _parse_oracle_list(value: str | None, option: str) -> list[str]:
    """Read a comma-separated list of oracle ids; unknown ids fail with the closest valid ones."""
    if value is None:
        return []
    known = _oracle_ids()
    chosen = [part.strip() for part in value.split(",") if part.strip()]
    for oracle_id in chosen:
        if oracle_id not in known:
            import difflib  # only to suggest a name for a mistyped one

            close = difflib.get_close_matches(oracle_id, known, n=2)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise click.BadParameter(f"unknown oracle {oracle_id!r}.{hint} Known oracles: {', '.join(known)} "
                                     "(see `mcpfuzz oracles`).", param_hint=option)
    return chosen


def _check_version(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from mcpfuzz.jsonrpc.versions import KNOWN_VERSIONS

    if value is not None and value not in KNOWN_VERSIONS:
        raise click.BadParameter(f"{value!r} is not an MCP protocol version mcpfuzz knows; use one of "
                                 f"{', '.join(KNOWN_VERSIONS)}.")
    return value


SERVER_OPTIONS = [
    click.option("--seed", type=int, default=None, help="Seed for generation (printed in the summary)."),
    click.option("--timeout", type=Seconds(min=0, min_open=True), default=5.0, show_default=True,
              metavar="DURATION", help="How long any answer may take before mcpfuzz checks that the server "
              "is alive; an invalid frame still unanswered then counts as unanswered."),
    click.option("--startup-timeout", type=Seconds(min=0, min_open=True), default=30.0, show_default=True,
              metavar="SECONDS", help="How long a server process mcpfuzz starts may take to give its first answer "
              "(with --launch: until its URL accepts connections); each start is measured and shown. Slow "
              "starters need this, not a longer --timeout."),
    click.option("--call-timeout", type=Seconds(min=0, min_open=True), default=30.0, show_default=True,
              metavar="DURATION", help="How long a valid call may take once the server has shown it is alive "
              "(answered a ping sent after --timeout) before it counts as dropped; progress notifications "
              "extend it. A slow answer is noted, never a hang."),
    click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write the JSON report here."),
    click.option("--junit-xml", "junit_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write a JUnit XML report here (a test case per oracle and target)."),
    click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write a SARIF 2.1.0 report here (for GitHub code scanning)."),
    click.option("--summary-md", "summary_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write a Markdown summary here (e.g. \"$GITHUB_STEP_SUMMARY\")."),
    click.option("--html", "html_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="PATH", help="Write a self-contained HTML report here: findings by root cause with their "
              "reproductions, per-target statistics, charts of memory, cases/s and findings over time."),
    click.option("-q", "--quiet", "quiet", is_flag=True, default=False,
              help="Console: no live progress, one line per finding, then the summary."),
    click.option("-v", "--verbose", "verbose", is_flag=True, default=False,
              help="Console: every finding in full (SDK findings too), whole stderr tails, every target."),
    click.option("--events", "events_path", type=click.Path(dir_okay=False, writable=True, allow_dash=True),
              default=None, metavar="PATH",
              help="Stream every event as one JSON object per line to PATH (`-`: stdout, the console then on stderr)."),
    click.option("--oracles", default=None, metavar="IDS", help="Run only these oracles (comma-separated ids)."),
    click.option("--exclude-oracles", default=None, metavar="IDS", help="Skip these oracles (comma-separated ids)."),
    click.option("--fail-on", type=click.Choice(SEVERITIES), default="medium", show_default=True,
              help="Lowest severity that makes the exit status 1."),
    click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Accepted findings (written by `mcpfuzz baseline`): they do not fail the run; an entry "
              "that no longer reproduces does."),
    click.option("--protocol-version", default=None, callback=_check_version, metavar="VERSION",
              help="Force a protocol version instead of negotiating (e.g. 2025-06-18 or 2026-07-28)."),
    click.option("--phases", default=",".join(RUN_PHASES), show_default=True, metavar="NAMES",
              help="Phases to run after the probe (comma-separated)."),
    click.option("--include-tool", "include_tools", multiple=True, metavar="NAME",
              help="Call this tool even if it is annotated destructiveHint or openWorldHint (repeatable)."),
    click.option("--exclude-tool", "exclude_tools", multiple=True, metavar="NAME",
              help="Never call this tool (repeatable)."),
    click.option("--include-target", "include_targets", multiple=True, metavar="KIND/NAME",
              help="Call this target (e.g. tool/delete_item) even if it is annotated as risky (repeatable)."),
    click.option("--exclude-target", "exclude_targets", multiple=True, metavar="KIND/NAME",
              help="Never call this target, e.g. tool/fetch_page (repeatable)."),
    click.option("--args-file", "args_path", type=click.Path(dir_okay=False, exists=True), default=None,
              metavar="FILE", help="Argument objects you know to be valid, per target (JSON or TOML: "
              "{\"tool/NAME\": [{...}, ...]}): called first in coverage, varied by the fuzz and stateful phases."),
    # `--args FILE` was this option's name; `call --args` is JSON text, so one name had two meanings.
    click.option("--args", "args_path_deprecated", type=click.Path(dir_okay=False, exists=True), default=None,
              hidden=True, metavar="FILE"),
    click.option("--cwd", "cwd", type=click.Path(exists=True, file_okay=False), default=None, metavar="DIR",
              help="Run the stdio server in DIR (e.g. a scratch folder for servers that write files); paths in "
              "the command that name files here stay valid."),
    click.option("--security", is_flag=True, default=False,
              help="Also look for sandbox escapes and command injection: the stdio server runs in a temporary "
              "workspace ({workspace} in its command) with canary files around it; path and shell payloads "
              "aim at them (sandbox-escape, command-injection oracles)."),
    click.option("--observe", is_flag=True, default=False,
              help="See what each call does, not only what it answers: a hook loaded into a Python or Node server "
              "mcpfuzz starts reports the files it touches, the processes it starts and the connections it opens "
              "(sandbox-escape, command-injection, network-egress, read-only-truthful); on with --security."),
    click.option("--allow-path", "allow_paths", multiple=True, type=click.Path(file_okay=False), metavar="DIR",
              help="A folder the server may touch besides its workspace (or working folder), with --observe or "
              "--security (repeatable)."),
    click.option("--coverage", is_flag=True, default=False,
              help="Steer the fuzz phase by the lines of the server's own code each call reaches (a Python or Node "
              "server mcpfuzz starts, over stdio or --launch: a tracer loaded at its start-up, V8's coverage for "
              "Node); lines reached per target in the reports."),
    click.option("--coverage-sdk", is_flag=True, default=False,
              help="With --coverage, count the lines of installed packages (the MCP SDK) too, not only the "
              "server's own code."),
    click.option("--read-only", is_flag=True, default=False,
              help="Call only targets annotated readOnlyHint: true (and those named with --include-target); "
              "for servers whose other tools change real data."),
    click.option("--strict-types", is_flag=True, default=False,
              help="Also send type changes lax servers may coerce (\"5\" for 5, 1.5 for an integer, null)."),
    click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False), default="corpus", show_default=True,
              metavar="DIR", help="Corpus folder (Hypothesis' example database lives in DIR/.hypothesis)."),
    click.option("--no-replay", is_flag=True, default=False,
              help="Do not replay the corpus before fuzzing (by default saved failures run first)."),
    click.option("--log-frames", type=click.Path(dir_okay=False, writable=True), default=None, metavar="PATH",
              help="Write every frame sent, one per line, to PATH (with --max-examples, the same seed and options "
                   "write the same bytes)."),
    click.option("--max-examples", type=click.IntRange(min=1), default=None, metavar="N",
              help="Cap each Hypothesis search at N examples (for runs that must be identical; default: time)."),
    click.option("--grace", type=Seconds(min=0), default=0.25, show_default=True, metavar="DURATION",
              help="After a later request is answered, how long to still wait for a frame's own reply."),
    click.option("--client-capabilities", default="all", show_default=True, metavar="LIST",
              help="Client capabilities mcpfuzz declares and serves when the server asks: all, none, or a comma "
                   "list of elicitation, sampling, roots."),
    click.option("--max-line", type=click.IntRange(min=1024), default=8 * 1024 * 1024, show_default=True,
              metavar="BYTES", help="Longest stdout line parsed; longer lines are reported and skipped."),
    click.option("--env", "env_pairs", multiple=True, metavar="NAME=VALUE",
              help="Extra environment variable for the server (repeatable)."),
    click.option("--header", "header_lines", multiple=True, metavar="'NAME: VALUE'",
              help="HTTP: header sent with every request, e.g. for auth (repeatable; values are never written)."),
    *AUTH_OPTIONS,
    click.option("--launch", default=None, metavar="'CMD'",
              help="HTTP: start the server with this shell-quoted command, restart it after crashes, watch it; "
                   "{port} here and in the URL: a free port."),
    click.option("--transport", type=click.Choice(TRANSPORT_CHOICES), default=AUTO, show_default=True,
              help="HTTP: streamable HTTP, legacy HTTP+SSE (2024-11-05), or detect from the URL's answers."),
    click.option("--servers-file", type=click.Path(dir_okay=False, exists=True), default=None, metavar="FILE",
              help="Take the server from an MCP client's config (mcpServers or VS Code's servers JSON)."),
    click.option("--server", "server_name", default=None, metavar="NAME",
              help="With --servers-file: the server to fuzz, launched as the client launches it."),
    *SHARED_OPTIONS,
]


def server_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options `run` and `soak` share (the server, the oracles, the reports), in --help order."""
    for option in reversed(SERVER_OPTIONS):
        command = option(command)
    return command


def build_config(server: tuple[str, ...], budget: float, options: dict[str, Any]) -> RunConfig:
    """The run's configuration from the shared options, every value checked first (usage errors exit 2)."""
    import os

    from mcpfuzz.cli.config_file import applied_config
    from mcpfuzz.cli.servers_file import resolve_server

    server, options, server_secrets = resolve_server(server, options, os.environ)
    config_file = applied_config()
    command = list(server)
    if not command:
        raise click.UsageError("no server given. Put the server command after `--`, e.g.\n"
                               "  mcpfuzz run -- python my_server.py\nor give the URL of an HTTP server:\n"
                               "  mcpfuzz run http://127.0.0.1:8000/mcp")
    env = parse_env(options["env_pairs"])
    http = with_auth(http_target(command, options["header_lines"], options["launch"], options["transport"], env),
                     options)
    if http is not None:
        command = []
    include = target_labels(options["include_tools"], options["include_targets"], "--include-target")
    exclude = target_labels(options["exclude_tools"], options["exclude_targets"], "--exclude-target")
    if config_file is not None:  # [targets."KIND/NAME"] tables add to the command line's lists
        include = (*include, *(t for t in config_file.include_targets if t not in exclude))
        exclude = (*exclude, *(t for t in config_file.exclude_targets if t not in include))
    both = sorted(set(include) & set(exclude))
    if both:
        raise click.BadParameter(f"{', '.join(both)} is both included and excluded; keep one of the two.",
                                 param_hint="--include-tool/--exclude-tool")
    selected = select_oracles(options["oracles"], options["exclude_oracles"])
    phase_names = parse_phases(options["phases"])

    import secrets
    from pathlib import Path

    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.phase_names import PhaseName
    from mcpfuzz.oracles.severity import Severity

    seed = options["seed"]
    log_frames = options["log_frames"]
    cwd = _server_cwd(options["cwd"], http is not None, command)  # may make the command's paths absolute
    _check_workspace_placeholder(command, http, options["security"])
    return RunConfig(
        command=command, seed=secrets.randbelow(2**32) if seed is None else seed, budget=budget,
        timeout=options["timeout"], startup_timeout=options["startup_timeout"], call_timeout=options["call_timeout"],
        grace=options["grace"],
        oracles=tuple(selected),
        fail_on=Severity.parse(options["fail_on"]), protocol_version=options["protocol_version"],
        phases=(PhaseName.PROBE, *map(PhaseName, phase_names)), max_line=options["max_line"], env=env,
        include_targets=include, exclude_targets=exclude, read_only=options["read_only"],
        target_options=_typed_options(options),
        cwd=cwd, security=options["security"], coverage=options["coverage"] or options["coverage_sdk"],
        coverage_sdk=options["coverage_sdk"], observe=options["observe"],
        allow_paths=tuple(str(Path(path).resolve()) for path in options["allow_paths"]),
        strict_types=options["strict_types"],
        corpus=check_corpus(options["corpus_dir"]), replay_corpus=not options["no_replay"],
        log_frames=Path(log_frames) if log_frames else None, max_examples=options["max_examples"], http=http,
        baseline=_baseline(options["baseline_path"]),
        known_secrets=(*(config_file.secrets if config_file else ()), *server_secrets),
        target_timeouts=dict(config_file.target_timeouts) if config_file else {},
        known_arguments=_known_arguments(_args_file(options)),
        shared=shared_from_options(options), client_capabilities=_client_capabilities(options["client_capabilities"]))


def _typed_options(options: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Each include or exclude label with the option the user typed for it, so a warning names that option."""
    from mcpfuzz.jsonrpc.target_kind import TargetKind

    pairs = []
    for verb in ("include", "exclude"):
        pairs += [(TargetKind.TOOL.label(name), f"--{verb}-tool") for name in options[f"{verb}_tools"]]
        pairs += [(label, f"--{verb}-target") for label in options[f"{verb}_targets"]]
    return tuple(pairs)


def _client_capabilities(text: str) -> frozenset:
    """--client-capabilities read, or a usage error naming what is accepted."""
    from mcpfuzz.engine.client.capabilities import parse_client_capabilities

    try:
        return parse_client_capabilities(text)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--client-capabilities") from None


def _server_cwd(cwd: str | None, by_url: bool, command: list[str]) -> str | None:
    """--cwd as an absolute folder; the command's words that name files here are made absolute in place."""
    if cwd is None:
        return None
    if by_url:
        raise click.BadParameter("only a stdio server has a working directory; use it in --launch's command",
                                 param_hint="--cwd")
    import os

    for index, word in enumerate(command):
        if not os.path.isabs(word) and (os.sep in word or index > 0) and os.path.exists(word):
            command[index] = os.path.abspath(word)
    return os.path.abspath(cwd)


def _check_workspace_placeholder(command: list[str], http: HttpTarget | None, security: bool) -> None:
    """`{workspace}` names the temporary workspace --security makes: without it the server would get the text."""
    from mcpfuzz.engine.security.placeholder import WORKSPACE_PLACEHOLDER

    words = [*command, *(http.launch if http is not None else ())]
    if not security and any(WORKSPACE_PLACEHOLDER in word for word in words):
        raise click.UsageError(f"{WORKSPACE_PLACEHOLDER} in the server's command is the temporary workspace of "
                               f"--security; add --security, or write a folder in its place")


def _args_file(options: dict[str, Any]) -> str | None:
    """--args-file, or the deprecated `--args FILE` with a notice on stderr."""
    old = options.get("args_path_deprecated")
    if old is None:
        return options["args_path"]
    if options["args_path"] is not None:
        raise click.UsageError("--args is the old name of --args-file; give --args-file alone")
    click.echo("warning: `run --args FILE` is now --args-file FILE (`call --args` takes JSON text); --args FILE "
               "still works for now", err=True)
    return str(old)


def _known_arguments(path: str | None) -> dict[str, tuple[dict, ...]]:
    """The --args file, read now so that a bad one stops the run before it starts (exit 2)."""
    if path is None:
        return {}
    from pathlib import Path

    from mcpfuzz.cli.args_file import load_args_file

    return load_args_file(Path(path))


def _baseline(path: str | None) -> Baseline | None:
    """The --baseline file, read now so that a bad one stops the run before it starts (exit 2)."""
    if path is None:
        return None
    from pathlib import Path

    from mcpfuzz.engine.baseline import BaselineError, load_baseline

    try:
        return load_baseline(Path(path))
    except BaselineError as error:
        raise click.UsageError(str(error)) from None


def exit_status(config: RunConfig, finished: RunFinished) -> int:
    """1 with findings at or above --fail-on (outside --baseline) or a stale baseline entry, else 2 when the
    server could not be tested (or what it declares could not be: no target called, the server lost), else 0. A
    finding that did not fail again on a fresh server is a note: never 1."""
    from mcpfuzz.engine.judge import counts_toward_fail_on

    if any(counts_toward_fail_on(f, config.fail_on) for f in finished.findings) or finished.stale_baseline:
        return EXIT_FINDINGS
    return EXIT_ERROR if finished.error or finished.untested else EXIT_CLEAN


def http_target(server: list[str], header_lines: tuple[str, ...], launch: str | None,
                transport: str, env: Mapping[str, str] | None = None) -> HttpTarget | None:
    """The HTTP target when SERVER is one URL; the HTTP-only options are refused for stdio servers."""
    import shlex
    from urllib.parse import urlsplit

    from mcpfuzz.transport.base import transport_choice
    from mcpfuzz.transport.http_target import HttpTarget, is_url

    if not (len(server) == 1 and is_url(server[0])):
        if any(is_url(part) for part in server[:1]):
            raise click.UsageError("give either one URL or a command after `--`, not both")
        used = [name for name, value in (("--header", header_lines), ("--launch", launch),
                                         ("--transport", transport != AUTO)) if value]
        if used:
            raise click.UsageError(f"{', '.join(used)} only applies to an HTTP URL; this server is a stdio command")
        return None
    try:
        argv = tuple(shlex.split(launch)) if launch else ()
    except ValueError as error:
        raise click.BadParameter(f"cannot split {launch!r} into words: {error}", param_hint="--launch") from None
    url = server[0]
    if not urlsplit(url).hostname:
        raise click.BadParameter(f"{url!r} has no host; e.g. http://127.0.0.1:8000/mcp", param_hint="URL")
    target = HttpTarget(url, parse_headers(header_lines), argv, transport_choice(transport))
    check_port_placeholder(target, env or {})
    return target


def check_port_placeholder(target: HttpTarget, env: Mapping[str, str] | None = None) -> None:
    """`{port}` works only in both the URL and how the server is launched (its command or an --env value it
    gets): mcpfuzz picks the port, the server binds it."""
    from mcpfuzz.transport.http_target import PORT_PLACEHOLDER

    in_url = target.picks_port
    in_launch = any(PORT_PLACEHOLDER in part for part in (*target.launch, *(env or {}).values()))
    if in_url and not target.launch:
        raise click.UsageError(f"{target.url} says {PORT_PLACEHOLDER}, but only a server mcpfuzz starts can be "
                               f"given a port; tip: add --launch 'python server.py --port {PORT_PLACEHOLDER}'")
    if in_url != in_launch:
        in_command = any(PORT_PLACEHOLDER in part for part in target.launch)
        where, other = ("the URL", "--launch") if in_url else ("--launch" if in_command else "--env", "the URL")
        raise click.UsageError(f"{PORT_PLACEHOLDER} is in {where} but not in {other}: the server would listen on "
                               f"another port than mcpfuzz connects to; tip: write {PORT_PLACEHOLDER} in both (in "
                               f"--launch, or in an --env value such as --env PORT={PORT_PLACEHOLDER})")


def parse_headers(lines: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """`Name: value` lines as pairs, refused early when malformed."""
    headers = []
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or any(c.isspace() for c in name.strip()):
            raise click.BadParameter(f"{line!r} is not 'Name: value'.", param_hint="--header")
        headers.append((name.strip(), value.strip()))
    return tuple(headers)


def target_labels(tools: tuple[str, ...], labels: tuple[str, ...], option: str) -> tuple[str, ...]:
    """`--include-tool NAME` as `tool/NAME`, with the `--include-target KIND/NAME` labels checked."""
    from mcpfuzz.jsonrpc.target_kind import TargetKind

    kinds = [kind.value for kind in TargetKind]
    for label in labels:
        kind, slash, name = label.partition("/")
        if not slash or not name or kind not in kinds:
            raise click.BadParameter(f"{label!r} is not KIND/NAME with a kind of {', '.join(kinds)}; "
                                     "e.g. tool/delete_item", param_hint=option)
    return (*(TargetKind.TOOL.label(name) for name in tools), *labels)


def check_corpus(folder: str) -> Path:
    """The corpus folder, refused early (exit 2) when it cannot be used."""
    from pathlib import Path

    from mcpfuzz.corpus.store import CorpusError, CorpusStore

    try:
        CorpusStore(Path(folder))
    except CorpusError as error:
        raise click.BadParameter(str(error), param_hint="--corpus") from None
    return Path(folder)


def select_oracles(only: str | None, exclude: str | None) -> list[str]:
    chosen = _parse_oracle_list(only, "--oracles") or _oracle_ids()
    skipped = set(_parse_oracle_list(exclude, "--exclude-oracles"))
    selected = [o for o in chosen if o not in skipped]
    if not selected:
        raise click.BadParameter("no oracle left to run after --exclude-oracles.", param_hint="--exclude-oracles")
    return selected


def parse_phases(value: str) -> list[str]:
    known = RUN_PHASES
    names = [part.strip() for part in value.split(",") if part.strip()]
    for name in names:
        if name not in known:
            import difflib  # only to suggest a name for a mistyped one

            close = difflib.get_close_matches(name, known, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise click.BadParameter(f"unknown phase {name!r}.{hint} Phases are {', '.join(known)}.",
                                     param_hint="--phases")
    return names


def parse_env(pairs: tuple[str, ...]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{pair!r} is not NAME=VALUE.", param_hint="--env")
        env[name] = value
    return env
