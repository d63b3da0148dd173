"""A plain JSON-RPC 2.0 server over stdio: the memory store of ``jsonrpc_server.py`` plus ``total`` (an array of
integers, params by name or by position), declared by ``jsonrpc_depth_server.openrpc.json``.

Usage: ``python tests/servers/jsonrpc_depth_server.py [--bug NAME]...``

Correct by default (zero findings). Each bug in ``DEPTH_BUGS`` is one of the mistakes JSON-RPC servers make past
the easy path: a request with id null taken for a notification, method names matched in any letter case, params
by position refused where the document allows them, array items never checked, a line length limit that kills.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from jsonrpc_server import Server, reply_to_line  # noqa: E402
from jsonschema import Draft202012Validator  # noqa: E402

DOCUMENT = Path(__file__).with_suffix(".openrpc.json")
LINE_LIMIT = 65536  # bytes: the line-limit-crash bug's reader gives up past this
DEPTH_BUGS = {
    "null-id-silent": "a request with id null is taken for a notification: never answered",
    "any-case-methods": "method names match in any letter case (`Store_Memory` runs store_memory)",
    "by-position-refused": "params by position are refused with -32602 where the document says `either`",
    "items-unchecked": "total does not check its items' type: a string among them ends in -32603",
    "line-limit-crash": f"a request line longer than {LINE_LIMIT} bytes kills the process",
}


def validators(document: dict) -> dict[str, tuple[Any, list[str], str]]:
    """Per method: a validator of its params as an object, the param order, the param structure."""
    defs = document["components"]["schemas"]
    table = {}
    for method in document["methods"]:
        properties = {p["name"]: json.loads(json.dumps(p["schema"]).replace("#/components/schemas/", "#/$defs/"))
                      for p in method["params"]}
        schema = {"type": "object", "properties": properties, "additionalProperties": False, "$defs": defs,
                  "required": [p["name"] for p in method["params"] if p.get("required")]}
        table[method["name"]] = (Draft202012Validator(schema), [p["name"] for p in method["params"]],
                                 method["paramStructure"])
    return table


class DepthServer(Server):
    """The memory store, `total`, and the depth bugs switched on."""

    def __init__(self, bugs: set[str]) -> None:
        super().__init__(bugs)
        self.document = json.loads(DOCUMENT.read_text())
        self.methods = validators(self.document)
        if "items-unchecked" in bugs:
            loose = json.loads(json.dumps(self.document))
            for method in loose["methods"]:
                for param in method["params"]:
                    param["schema"].pop("items", None)
            self.methods["total"] = validators(loose)["total"]

    def handle(self, message: Any) -> dict[str, Any] | None:
        """null-id-silent: a request whose id is null is run, and its answer dropped."""
        reply = super().handle(message)
        if "null-id-silent" in self.bugs and isinstance(message, dict) and "id" in message \
                and message["id"] is None and "method" in message:
            return None
        return reply

    def call(self, method: str, params: dict | list, rid: Any) -> dict[str, Any]:
        """rpc.discover serves this document; the bugs bend the method lookup and the param structure."""
        if method == "rpc.discover":
            return {"jsonrpc": "2.0", "id": rid, "result": self.document}
        if "any-case-methods" in self.bugs:
            method = next((name for name in self.methods if name.lower() == method.lower()), method)
        if "by-position-refused" in self.bugs and isinstance(params, list) and method in self.methods \
                and self.methods[method][2] == "either":
            return self.invalid(rid, "params must be an object")
        try:
            return super().call(method, params, rid)
        except TypeError as error:  # items-unchecked: the sum met a value that is no number
            return self.error(rid, -32603, f"internal error: {error}")

    def total(self, values: list[int], scale: int = 1) -> int:
        return sum(values) * scale


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bug", action="append", default=[], choices=sorted(DEPTH_BUGS))
    server = DepthServer(set(parser.parse_args().bug))
    for raw in sys.stdin.buffer:
        if "line-limit-crash" in server.bugs and len(raw) > LINE_LIMIT:
            raise SystemExit(f"line-limit-crash: a line of {len(raw)} bytes")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            out: Any = server.error(None, -32700, "parse error: invalid UTF-8")
        else:
            if not line.strip():
                continue
            out = reply_to_line(server, line)
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
