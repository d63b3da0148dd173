"""The surface server (resources, a template, prompts, completions) with the bugs servers have off the easy path:
references to things that do not exist, and template values that send a path normaliser into a loop.

Usage: ``python tests/servers/negative_refs_server.py [--bug NAME]...``

Without ``--bug`` it is ``surface_server.py`` as it is: zero findings in both eras. A template read of a title
that is (or decodes to) a path-like value is answered like any other title that names no note.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

sys.path.insert(0, str(Path(__file__).parent))

from mcp_server import RpcError, main  # noqa: E402
from surface_server import NOTES, PROMPTS, TEMPLATE, SurfaceServer  # noqa: E402

NEGATIVE_BUGS = {
    "completion-unknown-ref-crash": "completion/complete naming a prompt that does not exist kills the process "
                                    "(the handler looks the prompt up and uses it unchecked)",
    "completion-unknown-argument-crash": "completion/complete of an argument the prompt does not declare kills "
                                         "the process",
    "subscribe-unknown-silent": "resources/subscribe and unsubscribe of a URI no listing names are never answered",
    "template-loop": "reading the template with a title that climbs (`..` once decoded) loops for ever, burning "
                     "CPU: the server answers nothing from then on",
    "prompt-argument-type-code": "prompts/get with an argument that is no string answers -32603, not -32602",
    "slow-climb": "not a bug: the first read of a title that climbs (`..` once decoded) takes CLIMB_SECONDS (a cold "
                  "cache), then it is answered like any other title; later ones are quick",
}
CLIMB_SECONDS = 8.0  # past a 2 s --timeout and a wedge check's shortest fair wait (3x --timeout), answered while its
# fresh request waits
LISTED = {f"mem://notes/{key}" for key in NOTES}


class NegativeRefsServer(SurfaceServer):
    """The surface server, and the negative-reference bugs switched on."""

    BUGS = {**SurfaceServer.BUGS, **NEGATIVE_BUGS}
    climbed = [False]  # slow-climb: one slow read per process (over HTTP each session has a server object)

    def handle_request(self, rid: Any, method: str, params: dict[str, Any], *, first: bool) -> list[Any]:
        """subscribe-unknown-silent: a subscription change for a URI nobody listed is dropped."""
        if "subscribe-unknown-silent" in self.bugs and method in ("resources/subscribe", "resources/unsubscribe") \
                and params.get("uri") not in LISTED:
            return []
        return super().handle_request(rid, method, params, first=first)

    def read(self, params: dict[str, Any]) -> dict[str, Any]:
        """template-loop: a normaliser that strips `..` segments by walking back, and never gets past the root."""
        uri = params.get("uri")
        climbs = isinstance(uri, str) and ".." in unquote(uri.removeprefix("mem://by-title/")).split("/")
        if "slow-climb" in self.bugs and climbs and uri.startswith("mem://by-title/") and not self.climbed[0]:
            self.climbed[0] = True
            time.sleep(CLIMB_SECONDS)
        if "template-loop" in self.bugs and isinstance(uri, str) and uri.startswith("mem://by-title/"):
            parts = unquote(uri.removeprefix("mem://by-title/")).split("/")
            while ".." in parts:  # each `..` removed with the segment before it; at the root, (the bug) kept
                at = parts.index("..")
                if at > 0:
                    del parts[at - 1:at + 1]
        return super().read(params)

    def get_prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        """prompt-argument-type-code: a value that is no string fails deep inside, as an internal error."""
        arguments = params.get("arguments")
        if "prompt-argument-type-code" in self.bugs and isinstance(arguments, dict) \
                and not all(isinstance(value, str) for value in arguments.values()):
            raise RpcError(-32603, "internal error")
        return super().get_prompt(params)

    def complete(self, params: dict[str, Any]) -> dict[str, Any]:
        """The crash bugs: an unknown prompt ref, or an argument the prompt does not declare."""
        ref, argument = params.get("ref"), params.get("argument")
        if isinstance(ref, dict) and ref.get("type") == "ref/prompt":
            prompt = next((p for p in PROMPTS if p["name"] == ref.get("name")), None)
            if prompt is None and "completion-unknown-ref-crash" in self.bugs:
                raise SystemExit(f"completion-unknown-ref-crash: no prompt {ref.get('name')!r}")
            declared = {a["name"] for a in (prompt or {}).get("arguments", [])}
            name = argument.get("name") if isinstance(argument, dict) else None
            if prompt is not None and name not in declared and "completion-unknown-argument-crash" in self.bugs:
                raise SystemExit(f"completion-unknown-argument-crash: no argument {name!r}")
        if isinstance(ref, dict) and ref.get("type") == "ref/resource" and ref.get("uri") == TEMPLATE \
                and "completion-unknown-argument-crash" in self.bugs and isinstance(argument, dict) \
                and argument.get("name") != "title":
            raise SystemExit(f"completion-unknown-argument-crash: no variable {argument.get('name')!r}")
        return super().complete(params)


if __name__ == "__main__":
    sys.exit(main(server_class=NegativeRefsServer))
