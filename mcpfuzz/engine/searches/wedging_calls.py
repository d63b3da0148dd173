"""WedgingCalls: the calls that wedged the server, so the call phases never send one of them again.

A wedge holds the run for its call's whole fair wait and a fresh request; sent again (the latency target steers the
search right back to it), it would prove nothing the kept finding does not, and leave the rest of the target's time
to one input.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

MAX_REMEMBERED = 256  # wedging calls kept (the oldest forgotten first: memory stays bounded in a soak)


def _arguments_key(arguments: Any) -> str:
    """The arguments as canonical text (sorted keys), whatever values they hold."""
    try:
        return json.dumps(arguments, sort_keys=True, allow_nan=True, default=repr)
    except (TypeError, ValueError):  # keys of mixed types cannot be sorted
        return repr(arguments)


class WedgingCalls:
    """Per target: the argument objects whose call wedged the server."""

    def __init__(self) -> None:
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()

    def note(self, target: str, arguments: Any) -> None:
        """A call of `target` with `arguments` wedged the server."""
        self._seen[(target, _arguments_key(arguments))] = None
        if len(self._seen) > MAX_REMEMBERED:
            self._seen.popitem(last=False)

    def known(self, target: str, arguments: Any) -> bool:
        """Whether a call of `target` with `arguments` wedged the server before."""
        # Asked of every call: nearly always nothing wedged, and then no arguments are serialised.
        return bool(self._seen) and (target, _arguments_key(arguments)) in self._seen
