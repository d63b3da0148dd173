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
]


def jsonrpc_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add --jsonrpc and --openrpc to a command."""
    for option in reversed(JSONRPC_OPTIONS):
        command = option(command)
    return command


def jsonrpc_methods(plain: bool, path: str | None) -> tuple[dict, ...] | None:
    """The methods of a plain JSON-RPC server, read from its OpenRPC document (empty: ask the server's
    `rpc.discover`); None for an MCP server."""
    if not plain and path is None:
        return None
    if path is None:
        return ()
    if not plain:
        raise click.UsageError("--openrpc describes a plain JSON-RPC server: add --jsonrpc (MCP servers list their "
                               "own tools)")
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
