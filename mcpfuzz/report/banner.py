"""The two lines a run opens with: the server, then the seed, budget, timeout and oracles it runs with.

Light on purpose (neither rich nor the engine): `mcpfuzz run` writes them as soon as its options are checked, long
before the engine and the transports are imported; the console reporter prints the same lines through rich when the
run starts, unless they were written already.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

from mcpfuzz import __version__
from mcpfuzz.report.terminal_text import printable

# One line as (text, style) pieces; a style is rich's name for it, and `write_banner` knows the same few.
Line = tuple[tuple[str, str], ...]
_ANSI = {"bold": "\x1b[1m", "dim": "\x1b[2m"}
_RESET = "\x1b[0m"
# Rich's console styles nothing on these terminals.
_DUMB_TERMINALS = ("dumb", "unknown")


@dataclass(frozen=True)
class Banner:
    """What a run's opening lines say; `server` is already redacted."""

    server: str
    seed: int
    budget: float
    timeout: float
    oracles: int

    def lines(self) -> tuple[Line, Line]:
        """The version in bold and the server, then the settings dimmed."""
        settings = (f"seed {self.seed} · budget {self.budget:g}s · timeout {self.timeout:g}s · "
                    f"{self.oracles} oracles")
        return (((f"mcpfuzz {__version__}", "bold"), (f" · server: {printable(self.server)}", "")),
                ((settings, "dim"),))


def write_banner(banner: Banner, stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """Write the banner to `stream` byte for byte as the console reporter's rich console would; False, writing
    nothing, where only rich knows how: a tab (rich expands it) or a line break in the text, a stream that is not
    UTF-8, Windows (whose consoles rich drives its own way)."""
    texts = [text for line in banner.lines() for text, _ in line]
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    if sys.platform == "win32" or encoding != "utf8" or any("\t" in text or "\n" in text for text in texts):
        return False
    styled = styles_output(stream, environ)
    stream.write("".join("".join(f"{_ANSI[style]}{text}{_RESET}" if styled and style else text
                                 for text, style in line) + "\n" for line in banner.lines()))
    stream.flush()
    return True


def styles_output(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """True when rich's console would style what it writes to `stream`: a terminal (TTY_COMPATIBLE, else
    FORCE_COLOR, else the stream itself says so) that is not a dumb one. NO_COLOR keeps bold and dim."""
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        terminal = compatible == "1"
    elif "FORCE_COLOR" in environ:
        terminal = environ["FORCE_COLOR"] != ""
    else:
        try:
            terminal = stream.isatty()
        except ValueError:  # a closed stream
            terminal = False
    return terminal and environ.get("TERM", "").lower() not in _DUMB_TERMINALS
