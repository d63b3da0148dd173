"""Servers as MCP clients define them: `mcpServers` (Claude Desktop, Cursor, the Inspector) and VS Code's `servers`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from mcpfuzz.cli.auth_options import entry_auth_options
from mcpfuzz.cli.variables import Expander, UnknownVariable
from mcpfuzz.transport.base import AUTO

# The client's `type` and the transport mcpfuzz uses for it (`auto` detects it from the URL's answers).
TYPES = {
    "stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http", "sse": "sse",
}
# Where each client keeps its servers: `mcpServers` everywhere but VS Code (`servers`, also under `mcp` in
# its settings.json).
SERVER_TABLES = ("mcpServers", "servers")


class ServersFileError(click.UsageError):
    """A servers file or entry that cannot be used: which file, which server, why (exit status 2)."""


@dataclass(frozen=True)
class ServerEntry:
    """One server as a client launches it: a command with its environment, or a URL with its headers."""

    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    transport: str = AUTO
    auth: tuple[tuple[str, str], ...] = ()  # the `auth` object's options (a token command, OAuth client credentials)
    disabled: bool = False
    # Values that came from ${VAR}: secrets, like --env values.
    secrets: tuple[str, ...] = ()

    @property
    def words(self) -> list[str]:
        """The server as `run` takes it: the command's words, or the URL alone."""
        return [self.url] if self.url is not None else list(self.command)


def read_servers(path: Path, environ: Mapping[str, str]) -> dict[str, ServerEntry]:
    """Every server defined in a client's JSON file, in file order, variables expanded."""
    table = server_table(path)
    return {name: _entry(path, name, spec, environ) for name, spec in table.items()}


def pick_server(path: Path, name: str, environ: Mapping[str, str]) -> ServerEntry:
    """The server `name` of a servers file (only its variables need values); the error names the servers there."""
    table = server_table(path)
    if name not in table:
        import difflib

        close = difflib.get_close_matches(name, list(table), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ServersFileError(f"{path} has no server {name!r}.{hint} Servers there: "
                               f"{', '.join(table) or '(none)'}")
    return _entry(path, name, table[name], environ)


def server_table(path: Path) -> dict[str, Any]:
    """The file's servers by name, as written (JSON with comments, as VS Code allows)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ServersFileError(f"cannot read the servers file {path}: {error}") from None
    try:
        document = json.loads(strip_jsonc(text))
    except json.JSONDecodeError as error:
        raise ServersFileError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from None
    return _server_table(path, document)


def _server_table(path: Path, document: Any) -> dict[str, Any]:
    if isinstance(document, dict) and isinstance(document.get("mcp"), dict):
        document = document["mcp"]  # VS Code's settings.json keeps them under "mcp"
    if isinstance(document, dict):
        for key in SERVER_TABLES:
            if isinstance(document.get(key), dict):
                table: dict[str, Any] = document[key]
                return table
    raise ServersFileError(f"{path} has no \"mcpServers\" (Claude Desktop, Cursor, the Inspector) or \"servers\" "
                           "(VS Code) object; tip: name the client's MCP config file, e.g. "
                           "claude_desktop_config.json, .cursor/mcp.json or .vscode/mcp.json")


def _entry(path: Path, name: str, spec: Any, environ: Mapping[str, str]) -> ServerEntry:
    where = f"{path}: server {name!r}"
    if not isinstance(spec, dict):
        raise ServersFileError(f"{where} is not an object with \"command\" or \"url\"")
    # ${workspaceFolder} is the folder holding .vscode/, else the file's own folder.
    folder = path.resolve().parent
    workspace = str(folder.parent if folder.name == ".vscode" else folder)
    expander = Expander(environ, {"workspaceFolder": workspace}, _unsupported)
    try:
        spec = expander.value(spec)
    except UnknownVariable as error:
        raise ServersFileError(f"{where}: {error.reason}") from None
    kind = spec.get("type")
    if kind is not None and kind not in TYPES:
        raise ServersFileError(f"{where}: type {kind!r} is not one of {', '.join(TYPES)}")
    command, url = spec.get("command"), spec.get("url") or spec.get("serverUrl")
    if (command is None) == (url is None):
        raise ServersFileError(f"{where} needs either \"command\" (a stdio server) or \"url\" (an HTTP one)")
    if kind == "stdio" and command is None:
        raise ServersFileError(f"{where}: type \"stdio\" needs a \"command\"")
    env = _pairs(where, "env", spec.get("env"))
    if "envFile" in spec:
        env = (*_env_file(where, Path(workspace), spec["envFile"]), *env)
    headers = _pairs(where, "headers", spec.get("headers"))
    disabled = spec.get("disabled") is True
    secrets = tuple(expander.values)
    if command is not None:
        args = spec.get("args", [])
        if not isinstance(command, str) or not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ServersFileError(f"{where}: \"command\" must be a string and \"args\" a list of strings")
        return ServerEntry(name, (command, *args), env=env, transport=AUTO, disabled=disabled, secrets=secrets)
    if not isinstance(url, str):
        raise ServersFileError(f"{where}: \"url\" must be a string")
    return ServerEntry(name, url=url, headers=headers, env=env, transport=TYPES.get(kind or "", AUTO),
                       auth=tuple(entry_auth_options(spec.get("auth")).items()), disabled=disabled, secrets=secrets)


def _pairs(where: str, key: str, value: Any) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float)) for v in value.values()):
        raise ServersFileError(f"{where}: \"{key}\" must be an object of names to strings")
    return tuple((str(k), str(v)) for k, v in value.items())


def _env_file(where: str, workspace: Path, name: Any) -> tuple[tuple[str, str], ...]:
    """VS Code's `envFile`: NAME=VALUE lines, `#` comments, optional quotes."""
    if not isinstance(name, str):
        raise ServersFileError(f"{where}: \"envFile\" must be a path")
    path = Path(name) if Path(name).is_absolute() else workspace / name
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ServersFileError(f"{where}: cannot read its envFile {path}: {error}") from None
    pairs = []
    for line in lines:
        line = line.strip().removeprefix("export ").strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        pairs.append((key.strip(), value))
    return tuple(pairs)


def _unsupported(scope: str, name: str) -> str:
    if scope == "input":
        return (f": VS Code prompts for it when it starts the server; tip: replace ${{input:{name}}} with "
                f"${{env:{name.upper().replace('-', '_')}}} and export that variable")
    return "; only ${VAR}, ${env:VAR} and ${workspaceFolder} are expanded"


# JSON with comments and trailing commas, as VS Code writes it: comments go, strings stay untouched.
_JSONC_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def strip_jsonc(text: str) -> str:
    """JSONC as plain JSON: `//` and `/* */` comments and trailing commas removed, line numbers kept."""
    def keep_strings(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith('"'):
            return token
        return "\n" * token.count("\n")

    return _JSONC_TOKENS.sub(keep_strings, text)


def resolve_server(server: tuple[str, ...], options: dict[str, Any],
                   environ: Mapping[str, str]) -> tuple[tuple[str, ...], dict[str, Any], tuple[str, ...]]:
    """SERVER, or the `--servers-file`/`--server` entry as SERVER plus its env and headers; and its secrets."""
    servers_file, name = options.get("servers_file"), options.get("server_name")
    if not servers_file:
        if name:
            raise click.UsageError(f"--server {name} names a server of a servers file; tip: add --servers-file "
                                   "FILE (e.g. .vscode/mcp.json or claude_desktop_config.json)")
        return server, options, ()
    if server:
        raise click.UsageError("give the server either after `--`/as a URL or with --servers-file, not both")
    path = Path(servers_file)
    if not name:
        names = ", ".join(server_table(path)) or "(none)"
        raise click.UsageError(f"which server of {path}? Give --server NAME (or --all-servers with `run`); "
                               f"servers there: {names}")
    entry = pick_server(path, name, environ)
    return tuple(entry.words), entry_options(entry, options), entry.secrets


def entry_options(entry: ServerEntry, options: dict[str, Any]) -> dict[str, Any]:
    """The options with the entry's environment and headers first (the command line's own come after and win)."""
    merged = dict(options)
    merged["env_pairs"] = (*(f"{k}={v}" for k, v in entry.env), *options.get("env_pairs", ()))
    if entry.url is not None:
        merged["header_lines"] = (*(f"{k}: {v}" for k, v in entry.headers), *options.get("header_lines", ()))
        if options.get("transport", AUTO) == AUTO:
            merged["transport"] = entry.transport
        for option, value in entry.auth:  # the command line's own settings win
            merged[option] = options.get(option) or value
    return merged
