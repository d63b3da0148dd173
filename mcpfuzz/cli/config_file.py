"""The config file: `[tool.mcpfuzz]` in pyproject.toml or an `mcpfuzz.toml`, fed to click as each command's default_map.

Keys are the commands' long option names without `--` (`fail-on`, `exclude-tool`), read from the click
commands themselves, so an option added to `run` or `soak` is configurable (and in the JSON Schema) at once.
Top-level keys apply to every command that has the option; `[tool.mcpfuzz.run]`, `.soak` and `.replay`
to one command. The command line overrides the file.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from mcpfuzz.cli.variables import Expander, UnknownVariable

CONFIG_NAME = "mcpfuzz.toml"
PYPROJECT = "pyproject.toml"
# The commands a config file sets options of, each with a table of its own.
COMMANDS = ("run", "soak", "replay", "lint")
# Keys that are not options: the server when no SERVER is given, and the per-target table.
COMMAND_KEY, URL_KEY, TARGETS_KEY = "command", "url", "targets"
SERVER_KEYS = (COMMAND_KEY, URL_KEY)
TARGET_KEYS = ("include", "exclude", "timeout")
# Keys renamed with their option, still read (with a notice): `args` was `run --args FILE`, now --args-file
# (`call --args` takes JSON text, which a path in a config file's top level would have been fed to).
RENAMED_KEYS = {"args": "args-file"}
# Options that make no sense in a file (the file itself).
NOT_CONFIGURABLE = frozenset({"config_file", "list_rules", "dry_run",
                              # `snapshot --check`'s reports: the top-level json, sarif and junit-xml are the run's
                              "check_json_path", "check_sarif_path", "check_junit_path"})
# Repeatable options whose values are pairs, so that a TOML table can stand for them: env = { KEY = "v" }.
TABLE_JOINERS = {"env_pairs": "=", "header_lines": ": "}
# The click parameter that receives the server's words.
SERVER_PARAM = "server"
META_KEY = "mcpfuzz.config"


class ConfigError(click.UsageError):
    """A config file that cannot be used: which file, which key, why (exit status 2)."""


@dataclass(frozen=True)
class ConfigSource:
    """A parsed config file: its path, the mcpfuzz table, where that table sits, and the text (for line numbers)."""

    path: Path
    table: dict[str, Any]
    prefix: tuple[str, ...]
    text: str

    def where(self, section: tuple[str, ...], key: str | None = None) -> str:
        """`path:line` of `key` in `section` (or of the section's header), as precisely as the text shows it."""
        line = self._line_of(section, key)
        return f"{self.path}:{line}" if line else str(self.path)

    def header(self, section: tuple[str, ...]) -> str:
        """The TOML table name a user would write, e.g. [tool.mcpfuzz.run]."""
        names = [*self.prefix, *section]
        return "[" + ".".join(_quote_key(n) for n in names) + "]" if names else "the top-level table"

    def _line_of(self, section: tuple[str, ...], key: str | None) -> int | None:
        lines = self.text.splitlines()
        wanted = _normal_header(self.header(section)) if (self.prefix or section) else None
        start = 0
        if wanted is not None:
            found = next((i for i, line in enumerate(lines) if _normal_header(line) == wanted), None)
            if found is None and section:
                # The section may be an inline or dotted table: look for its last name as a key instead.
                return self._line_of(section[:-1], section[-1])
            if found is None:
                return None
            if key is None:
                return found + 1
            start = found + 1
        pattern = re.compile(r"\s*[\"']?" + re.escape(key or "") + r"[\"']?\s*[=.]")
        for index in range(start, len(lines)):
            if index > start and lines[index].lstrip().startswith("[") and wanted is not None:
                break
            if pattern.match(lines[index]):
                return index + 1
        return None


@dataclass(frozen=True)
class AppliedConfig:
    """What a config file gave one command besides its defaults: the file, its secret values, target settings."""

    path: Path
    secrets: tuple[str, ...] = ()
    include_targets: tuple[str, ...] = ()
    exclude_targets: tuple[str, ...] = ()
    target_timeouts: tuple[tuple[str, float], ...] = ()


def applied_config(ctx: click.Context | None = None) -> AppliedConfig | None:
    """The config file applied to the running command, if any."""
    ctx = ctx or click.get_current_context(silent=True)
    while ctx is not None:
        if META_KEY in ctx.meta:
            applied: AppliedConfig = ctx.meta[META_KEY]
            return applied
        ctx = ctx.parent
    return None


def config_file_option(command: Any) -> Any:
    """Add `--config-file` to a command: read first (eager), so the file's values become the other options' defaults.

    A hidden `--config` says which option the person meant: `--config-file` for mcpfuzz's TOML, `--servers-file`
    for an MCP client's JSON (the name other tools give that file).
    """
    command = click.option(
        "--config", "config_guess", default=None, hidden=True, expose_value=False, is_eager=True,
        callback=_meant_option)(command)
    return click.option(
        "--config-file", type=click.Path(dir_okay=False, exists=True), default=None, metavar="PATH",
        is_eager=True, expose_value=False, callback=_apply_config,
        help=f"Read options from this TOML file [default: {CONFIG_NAME}, or [tool.mcpfuzz] in {PYPROJECT}, "
             "in this folder or the nearest one above it].")(command)


def _meant_option(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is None:
        return
    if _looks_like_json(Path(value)):
        raise click.UsageError(f"--config: {value} is JSON, the server list of an MCP client? Give it with "
                               f"--servers-file {value} --server NAME; mcpfuzz's own options are read from a TOML "
                               f"file with --config-file ({CONFIG_NAME})")
    other = "" if Path(value).suffix.lower() == ".toml" else \
        f"; for an MCP client's server list (JSON), --servers-file {value}"
    raise click.UsageError(f"no option --config; to read mcpfuzz's options from a TOML file give --config-file "
                           f"{value}{other}")


def _looks_like_json(path: Path) -> bool:
    """A .json name, or a file whose first character is `{` (TOML never starts so)."""
    if path.suffix.lower() == ".json":
        return True
    try:
        with path.open(encoding="utf-8", errors="replace") as file:
            return file.read(4096).lstrip().startswith("{")
    except OSError:
        return False


def _apply_config(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    path = Path(value) if value else find_config(Path.cwd())
    if path is None:
        return
    if value is not None and _looks_like_json(path):
        raise ConfigError(f"{path} is JSON, not mcpfuzz's TOML options; an MCP client's server list (mcpServers) "
                          f"is read with --servers-file {value} --server NAME")
    source = read_config(path, explicit=value is not None)
    if source is None:
        return
    # The group is the root of the running context: reading it there keeps this module below the commands.
    root = ctx.find_root().command
    known = root.commands if isinstance(root, click.Group) else {ctx.command.name or "": ctx.command}
    commands = {name: known[name] for name in COMMANDS if name in known}
    name = ctx.command.name or ""
    defaults, applied = command_defaults(source, name, commands, ctx, os.environ)
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    ctx.meta[META_KEY] = applied


def find_config(start: Path) -> Path | None:
    """The nearest mcpfuzz.toml, or pyproject.toml with [tool.mcpfuzz], from `start` up to the repository root."""
    for folder in (start.resolve(), *start.resolve().parents):
        own = folder / CONFIG_NAME
        if own.is_file():
            return own
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and _has_mcpfuzz_table(pyproject):
            return pyproject
        if (folder / ".git").exists():
            return None
    return None


def _has_mcpfuzz_table(path: Path) -> bool:
    # A cheap look before parsing: most pyproject.toml files have no such table.
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return "tool.mcpfuzz" in text


def read_config(path: Path, *, explicit: bool = True) -> ConfigSource | None:
    """Parse a config file; None for a found pyproject.toml without [tool.mcpfuzz] (an error when named)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read the config file {path}: {error}") from None
    if sys.version_info >= (3, 11):  # imported here: a command line without a config file never parses TOML
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    if path.name != PYPROJECT:
        return ConfigSource(path, document, (), text)
    table = document.get("tool", {}).get("mcpfuzz")
    if table is None:
        if explicit:
            raise ConfigError(f"{path} has no [tool.mcpfuzz] table; tip: add one, or name an {CONFIG_NAME}")
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.mcpfuzz must be a table, e.g. [tool.mcpfuzz]")
    return ConfigSource(path, table, ("tool", "mcpfuzz"), text)


def option_keys(command: click.Command) -> dict[str, click.Option]:
    """A command's configurable options by key: the long option name without `--`."""
    keys = {}
    for param in command.params:
        if not isinstance(param, click.Option) or param.name in NOT_CONFIGURABLE or param.hidden:
            continue
        long_names = [opt for opt in param.opts if opt.startswith("--")]
        if long_names:
            keys[long_names[0][2:]] = param
    return keys


def command_defaults(source: ConfigSource, name: str, commands: Mapping[str, click.Command], ctx: click.Context,
                     environ: Mapping[str, str]) -> tuple[dict[str, Any], AppliedConfig]:
    """The default_map of command `name` from a config file, every key and value checked first."""
    source = _renamed(source)
    keys = {command: option_keys(cmd) for command, cmd in commands.items()}
    shared: set[str] = set().union(*keys.values()) if keys else set()
    top_level = {*shared, *SERVER_KEYS, TARGETS_KEY, *commands}
    _check_keys(source, (), source.table, top_level)
    for command in commands:
        section = source.table.get(command, {})
        if not isinstance(section, dict):
            raise ConfigError(f"{source.where((), command)}: {command} must be a table, e.g. "
                              f"{source.header((command,))}")
        _check_keys(source, (command,), section, set(keys[command]) | set(SERVER_KEYS), other=keys)
    expander = Expander(environ)
    folder = source.path.parent
    # A command without a table of its own (`targets`, `call`, `snapshot`) takes the top-level keys it shares with
    # `run`, whose meaning they keep; another command's keys (lint's `format` and `output`) are not its own.
    own = commands.get(name, ctx.command)
    options = keys.get(name) or {key: param for key, param in option_keys(own).items() if key in keys.get("run", {})}
    takes_server = SERVER_PARAM in {param.name for param in own.params}
    defaults: dict[str, Any] = {}
    layers: list[tuple[tuple[str, ...], dict[str, Any]]] = [((), source.table)]
    if name in commands:
        layers.append(((name,), source.table.get(name, {})))
    for section, table in layers:
        for key, raw in table.items():
            if key in options:
                param = options[key]
                value = _expand(source, section, key, raw, expander)
                defaults[param.name or key] = _option_value(source, section, key, param, value, folder, ctx)
            elif key in SERVER_KEYS and takes_server:
                value = _expand(source, section, key, raw, expander)
                defaults[SERVER_PARAM] = _server_words(source, section, key, value)
    both = [key for key in SERVER_KEYS if any(key in table for _, table in layers)]
    if len(both) > 1:
        raise ConfigError(f"{source.path}: both {COMMAND_KEY} and {URL_KEY} are set; a server is one or the other")
    include, exclude, timeouts = _targets(source, source.table.get(TARGETS_KEY, {}))
    return defaults, AppliedConfig(source.path, tuple(expander.values), include, exclude, timeouts)


def _renamed(source: ConfigSource) -> ConfigSource:
    """The file with its renamed keys read under their new names, each said once on stderr."""
    def rename(section: tuple[str, ...], table: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for key, value in table.items():
            if key in RENAMED_KEYS and RENAMED_KEYS[key] not in table:
                click.echo(f"warning: {source.where(section, key)}: {key!r} is now {RENAMED_KEYS[key]!r}; "
                           "the old key still works for now", err=True)
                key = RENAMED_KEYS[key]
            out[key] = rename((*section, key), value) if key in COMMANDS and isinstance(value, dict) else value
        return out

    if not any(key in source.table or key in _dict_values(source.table) for key in RENAMED_KEYS):
        return source
    return ConfigSource(source.path, rename((), source.table), source.prefix, source.text)


def _dict_values(table: dict[str, Any]) -> set[str]:
    """The keys of the per-command tables."""
    return {key for name in COMMANDS if isinstance(table.get(name), dict) for key in table[name]}


def _check_keys(source: ConfigSource, section: tuple[str, ...], table: dict[str, Any], known: set[str],
                other: Mapping[str, Mapping[str, click.Option]] | None = None) -> None:
    for key in table:
        if key in known:
            continue
        where = source.where(section, key)
        if key == "tool" and not section and not source.prefix and isinstance(table[key], dict) \
                and "mcpfuzz" in table[key]:
            raise ConfigError(f"{source.where(('tool', 'mcpfuzz'))}: [tool.mcpfuzz] is the header pyproject.toml "
                              f"needs; tip: drop that header in {source.path.name}, whose keys sit at the top level")
        elsewhere = [command for command, options in (other or {}).items() if key in options]
        if elsewhere:
            raise ConfigError(f"{where}: {key!r} is not an option of `mcpfuzz {section[0]}` (it is one of "
                              f"`mcpfuzz {elsewhere[0]}`); tip: move it to {source.header((elsewhere[0],))} "
                              "or to the top-level table")
        import difflib  # only to suggest a name for a mistyped one

        close = difflib.get_close_matches(key, sorted(known), n=1)
        if not close and "_" in key:
            close = difflib.get_close_matches(key.replace("_", "-"), sorted(known), n=1)
        # A long list of every key helps nobody: name the place that lists them instead.
        listing = f"; known keys: {', '.join(sorted(known))}" if len(known) <= 12 else \
            "; `mcpfuzz run --help` lists the options (each is a key without `--`), docs/config.md the tables"
        hint = f"; did you mean {close[0]!r}?" if close else listing
        raise ConfigError(f"{where}: unknown key {key!r} in {source.header(section)}{hint}")


def _expand(source: ConfigSource, section: tuple[str, ...], key: str, value: Any, expander: Expander) -> Any:
    try:
        return expander.value(value)
    except UnknownVariable as error:
        raise ConfigError(f"{source.where(section, key)}: {key}: {error.reason}") from None


def _option_value(source: ConfigSource, section: tuple[str, ...], key: str, param: click.Option, value: Any,
                  folder: Path, ctx: click.Context) -> Any:
    """The value as click would take it from the command line, checked by the option's own type."""
    where = source.where(section, key)
    if param.multiple:
        if isinstance(value, dict) and param.name in TABLE_JOINERS:
            joiner = TABLE_JOINERS[param.name]
            value = [f"{name}{joiner}{item}" for name, item in value.items()]
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(item, (str, int, float)) and not isinstance(item, bool) for item in items):
            raise ConfigError(f"{where}: {key} takes a list of strings, e.g. {key} = [\"a\", \"b\"]")
        value = [_resolve_path(param, str(item), folder) for item in items]
    elif param.is_flag:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {key} is a flag: write {key} = true or {key} = false")
    else:
        if isinstance(value, (list, dict, bool)):
            raise ConfigError(f"{where}: {key} takes one value (a number or a string), not {value!r}")
        value = _resolve_path(param, value, folder) if isinstance(value, str) else value
    try:
        param.type_cast_value(ctx, value)
    except click.BadParameter as error:
        raise ConfigError(f"{where}: {key} = {value!r}: {error.message}") from None
    return value


def _resolve_path(param: click.Option, value: str, folder: Path) -> str:
    # A path in a config file means the same whichever folder mcpfuzz runs from: it is relative to the file.
    if isinstance(param.type, click.Path) and value not in ("-", "") and not Path(value).is_absolute():
        return str(folder / value)
    return value


def _server_words(source: ConfigSource, section: tuple[str, ...], key: str, value: Any) -> list[str]:
    where = source.where(section, key)
    if key == URL_KEY:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where}: url takes one URL, e.g. url = \"http://127.0.0.1:8000/mcp\"")
        return [value]
    if isinstance(value, str):
        try:
            words = shlex.split(value)
        except ValueError as error:
            raise ConfigError(f"{where}: cannot split {value!r} into words: {error}") from None
    elif isinstance(value, list) and all(isinstance(word, str) for word in value):
        words = list(value)
    else:
        raise ConfigError(f"{where}: command takes a list of words, e.g. command = [\"python\", \"server.py\"]")
    if not words:
        raise ConfigError(f"{where}: command is empty")
    return words


TargetSettings = tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, float], ...]]


def _targets(source: ConfigSource, table: Any) -> TargetSettings:
    """`[targets."KIND/NAME"]` tables: include (call it though risky), exclude (never), timeout (per call)."""
    from mcpfuzz.jsonrpc.target_kind import TargetKind

    if not isinstance(table, dict):
        raise ConfigError(f"{source.where((), TARGETS_KEY)}: targets must be a table of KIND/NAME tables")
    kinds = [kind.value for kind in TargetKind]
    include: list[str] = []
    exclude: list[str] = []
    timeouts: list[tuple[str, float]] = []
    for label, settings in table.items():
        section = (TARGETS_KEY, label)
        kind, slash, name = label.partition("/")
        if not slash or not name or kind not in kinds:
            raise ConfigError(f"{source.where((TARGETS_KEY,), label)}: {label!r} is not KIND/NAME with a kind of "
                              f"{', '.join(kinds)}; e.g. [tool.mcpfuzz.targets.\"tool/delete_item\"]")
        if not isinstance(settings, dict):
            raise ConfigError(f"{source.where((TARGETS_KEY,), label)}: {label} must be a table, e.g. "
                              f"{{ exclude = true }}")
        _check_keys(source, section, settings, set(TARGET_KEYS))
        if "timeout" in settings:
            timeouts.append((label, _seconds(source, section, settings["timeout"])))
        flags = {key: value for key, value in settings.items() if key != "timeout"}
        for key, chosen in _bools(source, section, flags):
            if chosen:
                (include if key == "include" else exclude).append(label)
        if label in include and label in exclude:
            raise ConfigError(f"{source.where(section)}: {label} is both included and excluded; keep one")
    return tuple(include), tuple(exclude), tuple(timeouts)


def _seconds(source: ConfigSource, section: tuple[str, ...], value: Any) -> float:
    import math
    from contextlib import suppress

    from mcpfuzz.cli.durations import DurationError, parse_duration

    if isinstance(value, str):
        with suppress(DurationError):  # refused below, with what a timeout is
            value = parse_duration(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{source.where(section, 'timeout')}: timeout is a duration above 0 (seconds, or e.g. "
                          f"\"500ms\", \"2m\"), not {value!r}")
    return float(value)


def _bools(source: ConfigSource, section: tuple[str, ...], table: dict[str, Any]) -> Iterator[tuple[str, bool]]:
    for key, value in table.items():
        if not isinstance(value, bool):
            raise ConfigError(f"{source.where(section, key)}: {key} is true or false, not {value!r}")
        yield key, value


def _quote_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else f'"{name}"'


def _normal_header(line: str) -> str:
    return re.sub(r"[\s\"']", "", line.split("#", 1)[0])

