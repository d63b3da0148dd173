"""`run --jsonrpc --openrpc FILE`: a plain JSON-RPC 2.0 server whose methods an OpenRPC document declares."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

JSONRPC_OPTIONS = [
    click.option("--jsonrpc", "plain_jsonrpc", is_flag=True, default=False,
                 help="The server speaks plain JSON-RPC 2.0 (no MCP handshake); its methods come from --openrpc."),
    click.option("--openrpc", "openrpc_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                 help="OpenRPC 1.x document declaring the methods, their params and errors (with --jsonrpc; "
                      "without it the server's own rpc.discover is asked)."),
    click.option("--method", "method_names", multiple=True, metavar="NAME",
                 help="Without a document: a method to call (repeatable), with --params-schema."),
    click.option("--params-schema", "params_schemas", multiple=True, metavar="JSON",
                 help="The JSON Schema (an object schema, params by name) of each --method, in the same order."),
]


def jsonrpc_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add --jsonrpc and --openrpc to a command."""
    for option in reversed(JSONRPC_OPTIONS):
        command = option(command)
    return command


def jsonrpc_methods(plain: bool, path: str | None, names: tuple[str, ...] = (),
                    schemas: tuple[str, ...] = ()) -> tuple[dict, ...] | None:
    """The methods of a plain JSON-RPC server, read from its OpenRPC document, or from --method and --params-schema
    (empty: ask the server's `rpc.discover`); None for an MCP server."""
    if not plain and path is None and not names and not schemas:
        return None
    if not plain:
        raise click.UsageError("--openrpc, --method and --params-schema describe a plain JSON-RPC server: add "
                               "--jsonrpc (MCP servers list their own tools)")
    if names or schemas:
        if path is not None:
            raise click.UsageError("give the methods either in --openrpc FILE or with --method, not both")
        return methods_from_options(names, schemas)
    if path is None:
        return ()
    import json
    from pathlib import Path

    from mcpfuzz.jsonrpc.openrpc import OpenRpcError, read_methods

    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise click.BadParameter(f"cannot read {path}: {error.strerror or error}", param_hint="--openrpc") from None
    except ValueError as error:
        raise click.BadParameter(f"{path} is not JSON: {error}", param_hint="--openrpc") from None
    try:
        return tuple(read_methods(document))
    except OpenRpcError as error:
        raise click.BadParameter(f"{path}: {error}; tip: see https://spec.open-rpc.org for the document's shape",
                                 param_hint="--openrpc") from None


def methods_from_options(names: tuple[str, ...], schemas: tuple[str, ...]) -> tuple[dict, ...]:
    """Declarations as the document would give them: one --params-schema per --method (or none at all: no params
    are checked), params by name."""
    import json

    from mcpfuzz.jsonrpc.openrpc import method_declaration

    if schemas and len(schemas) != len(names):
        raise click.UsageError(f"{len(names)} --method but {len(schemas)} --params-schema: give one schema per method,"
                               " in the same order (or none)")
    methods = []
    for index, name in enumerate(names):
        schema: Any = {"type": "object"}
        if schemas:
            try:
                schema = json.loads(schemas[index])
            except ValueError as error:
                raise click.BadParameter(f"the schema of {name!r} is not JSON: {error}",
                                         param_hint="--params-schema") from None
            if not isinstance(schema, dict) or schema.get("type", "object") != "object":
                raise click.BadParameter(f"the schema of {name!r} must be an object schema (params by name), e.g. "
                                         '\'{"type": "object", "properties": {"id": {"type": "string"}}}\'',
                                         param_hint="--params-schema")
        methods.append(method_declaration(name, schema))
    return tuple(methods)
