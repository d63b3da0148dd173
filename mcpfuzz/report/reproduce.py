"""Copy-pasteable shell reproductions of a finding's frames."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

# A frame longer than this is not pasted into a terminal; the JSON report has it in full.
MAX_INLINE_FRAME = 2000
HANDSHAKE_METHODS = (b'"method":"initialize"', b'"method":"server/discover"')


def is_printable(frame: bytes) -> bool:
    """True when the frame is UTF-8 text without control characters."""
    try:
        text = frame.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text)


def printf_escape(frame: bytes) -> str:
    """Escape bytes for `printf '%b'`: backslashes doubled, non-printable bytes as octal."""
    out = []
    for byte in frame:
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append(f"\\0{byte:03o}")
    return "".join(out)


def printf_line(frame: bytes) -> str:
    """`printf` command writing one frame and its newline."""
    if is_printable(frame):
        return f"printf '%s\\n' {shlex.quote(frame.decode('utf-8'))}"
    return f"printf '%b\\n' {shlex.quote(printf_escape(frame))}"


def shell_reproduction(command: Sequence[str], frames: Sequence[bytes]) -> tuple[str, list[str]]:
    """A pipeline that sends the frames to a fresh server, and notes about what it could not show.

    The handshake gets its own write and a pause: the python SDK reads stdin in chunks, and bytes
    that arrive with `initialize` can kill it before it answers.
    """
    notes: list[str] = []
    steps: list[str] = []
    for index, frame in enumerate(frames):
        if len(frame) > MAX_INLINE_FRAME:
            notes.append(f"frame {index + 1} is {len(frame)} bytes: too long to paste; the JSON report holds it")
            steps.append(f"printf '%s\\n' {shlex.quote('<frame ' + str(index + 1) + ' omitted>')}")
            continue
        if not is_printable(frame):
            notes.append(f"frame {index + 1} has bytes that are not printable UTF-8: written as octal escapes")
        steps.append(printf_line(frame))
        if any(marker in frame for marker in HANDSHAKE_METHODS) and index < len(frames) - 1:
            steps.append("sleep 1")
    steps.append("sleep 2")
    return "{ " + "; ".join(steps) + "; } | " + shlex.join(command), notes
