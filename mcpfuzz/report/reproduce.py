"""Copy-pasteable shell reproductions of a finding's frames: a printf pipeline for a command, curl for a URL."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from mcpfuzz.engine.events import Finding
from mcpfuzz.engine.security.workspace import WORKSPACE_PLACEHOLDER
from mcpfuzz.jsonrpc.frame import Posting
from mcpfuzz.report.terminal_text import safe
from mcpfuzz.transport.base import TransportKind
from mcpfuzz.transport.connect import ServerTarget
from mcpfuzz.transport.http_headers import (
    ACCEPT_BOTH,
    SESSION_HEADER,
    mcp_headers,
    modern_version,
    parse_body,
    set_header,
)
from mcpfuzz.transport.http_target import HttpTarget
from mcpfuzz.transport.target import ServerKind

# A frame longer than this is not pasted into a terminal; the JSON report has it in full.
MAX_INLINE_FRAME = 2000
HANDSHAKE_METHODS = (b'"method":"initialize"', b'"method":"server/discover"')
ALIVE_ID = "mcpfuzz-alive"  # the id of the liveness request that ends every reproduction
# Seconds a pasted reproduction may run: a server that hangs (or ignores the end of its input) is stopped, so the
# terminal is given back; a stdio pipeline gets its pauses on top.
REPRODUCTION_SECONDS = 10
SESSION_VARIABLE = "$SID"  # the shell variable the initialize POST saves the session id into
# A case's own header changes (`Case.http_headers`): a value replaces the header, None leaves it out.
HeaderChanges = tuple[tuple[str, str | None], ...]


def liveness_frame(frames: Sequence[bytes]) -> bytes:
    """The era's cheapest request, sent last: its answer shows the server still alive (silence: dead or stuck).

    In the 2026-07-28 era that is the reproduction's own `server/discover` again (its `_meta` included), or one
    carrying the `_meta` of its first modern request.
    """
    import json

    messages = [parse_body(line) for frame in frames for line in frame.split(b"\n")]  # a case's lines: its POSTs
    for message in messages:
        if isinstance(message, dict) and message.get("method") == "server/discover":
            return json.dumps({**message, "id": ALIVE_ID}, separators=(",", ":")).encode()
    for message in messages:  # a stateless request with no discover of its own: one with the same `_meta`
        if modern_version(message) is not None:
            discover = {"jsonrpc": "2.0", "id": ALIVE_ID, "method": "server/discover",
                        "params": {"_meta": message["params"]["_meta"]}}
            return json.dumps(discover, separators=(",", ":")).encode()
    return json.dumps({"jsonrpc": "2.0", "id": ALIVE_ID, "method": "ping"}, separators=(",", ":")).encode()


# The run's workspace is removed at its end: a shell line cannot name it, `mcpfuzz replay` makes a new one.
WORKSPACE_NOTE = (f"{WORKSPACE_PLACEHOLDER} was the run's temporary workspace, now removed: put a folder of yours in "
                  f"its place (`mkdir -p /tmp/ws/workspace`), or `mcpfuzz replay` the transcript, which plants a new "
                  "one with its canaries and points the frames at it")
ALIVE_NOTE = f"the last request (id \"{ALIVE_ID}\") checks the server is still alive: its answer is the last line"


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def is_printable(frame: bytes) -> bool:
    """True when the frame is UTF-8 text without control characters (nor anything else a terminal must not get
    raw: a C1 control, a bidirectional override), so it can be pasted as it is."""
    try:
        text = frame.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return _CONTROL.search(text) is None and safe(text)


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


def shell_reproduction(command: Sequence[str], frames: Sequence[bytes],
                       env_names: Sequence[str] = ()) -> tuple[str, list[str]]:
    """A pipeline that sends the frames to a fresh server, and notes about what it could not show.

    The handshake gets its own write and a pause: the python SDK reads stdin in chunks, and bytes
    that arrive with `initialize` can kill it before it answers. `env_names`: the variables the run set for the
    server; the pipeline passes each on from the user's own shell (`env NAME="$NAME"`), as no value is written.
    The server runs under `timeout`: the line ends even when the server hangs or never exits.
    """
    notes: list[str] = []
    if env_names:
        notes.append(_env_note(env_names, "ran"))
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
    steps += ["sleep 2", printf_line(liveness_frame(frames)), "sleep 1"]
    notes.append(ALIVE_NOTE)
    paused = sum(int(step.removeprefix("sleep ")) for step in steps if step.startswith("sleep "))
    limit = f"timeout {REPRODUCTION_SECONDS + paused} "
    return "{ " + "; ".join(steps) + "; } | " + limit + env_prefix(env_names) + shlex.join(command), notes


def _env_note(env_names: Sequence[str], how: str) -> str:
    """Which variables the server `how` (ran, was launched) with: the user exports them, as no value is written."""
    return (f"the server {how} with {', '.join(env_names)} set: export {'them' if len(env_names) > 1 else 'it'} "
            "in your shell first (values are never written)")


def env_prefix(env_names: Sequence[str]) -> str:
    """`env NAME="$NAME" ... ` for the variables a server ran with (each value taken from the user's shell)."""
    if not env_names:
        return ""
    return "env " + " ".join(f'{name}="${name}"' if _SHELL_NAME.fullmatch(name) else shlex.quote(f"{name}=...")
                             for name in env_names) + " "


_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a name the shell can expand as $NAME


def curl_reproduction(target: HttpTarget, frames: Sequence[bytes], posts: Posting = Posting.ONE,
                      case_headers: HeaderChanges = ()) -> tuple[str, list[str]]:
    """curl commands that POST the frames to the URL, carrying the session id the handshake hands out.

    `posts` says how the last frame (the case's own) travels: one POST, or one POST per line as the case sends them.
    `case_headers` are the case's own changes to its POST's headers, applied as the transport applies them (a
    foreign Origin added, the Mcp-Session-Id left out, another Accept): the curl line sends what the case sent.
    Header values given with --header are not repeated (they may be secrets): the notes say so.
    """
    notes: list[str] = []
    if target.headers:
        names = ", ".join(name for name, _ in target.headers)
        notes.append(f"add your own {names} header{'s' if len(target.headers) > 1 else ''} "
                     "(values are never written)")
    if target.auth is not None:
        notes.append(f"add -H \"Authorization: Bearer $TOKEN\" to each curl line, with a token from "
                     f"{target.auth.describe()}; `mcpfuzz replay` gets one the same way")
    if target.launch and target.env_names:
        notes.append(_env_note(target.env_names, "was launched"))
    if target.picks_port:
        notes.append("start the server with a free port in place of {port} in its launch command, and put that "
                     "port in the URLs below")
    if target.transport is TransportKind.LEGACY_SSE:
        posts = Posting.ONE  # its answers come on the GET stream, so a case is sent as one POST
        notes.append("legacy HTTP+SSE: answers arrive on the GET stream; open it first with "
                     f"`curl -N {shlex.quote(target.url)}` and POST to the endpoint its first event names")
    steps: list[str] = []
    version: str | None = None
    for index, frame in enumerate(frames):
        # The case's own frame may travel as one POST per line: each line is then a body of its own.
        several = index == len(frames) - 1 and posts is not Posting.ONE
        longest = max(map(len, frame.split(b"\n"))) if several else len(frame)
        if longest > MAX_INLINE_FRAME:
            notes.append(f"frame {index + 1} is {len(frame)} bytes: too long to paste; the JSON report holds it")
            continue
        message = parse_body(frame)
        own = case_headers if index == len(frames) - 1 else ()
        if isinstance(message, dict) and message.get("method") == "initialize":
            params = message.get("params")
            asked = params.get("protocolVersion") if isinstance(params, dict) else None
            steps.append(_curl(target.url, frame, _headers(message, None, session=False, changes=own),
                               capture_session=True))
            version = asked if isinstance(asked, str) else None
            continue
        if several:
            steps += _several_posts(target.url, frame.split(b"\n"), posts, version)
            notes.append(POSTS_NOTES[posts])
            continue
        if not is_printable(frame):
            notes.append(f"frame {index + 1} has bytes that are not printable UTF-8: written as octal escapes")
        steps.append(_curl(target.url, frame, _headers(message, version, session=version is not None, changes=own)))
    alive = liveness_frame(frames)
    steps.append(_curl(target.url, alive, _headers(parse_body(alive), version, session=version is not None)))
    notes.append(ALIVE_NOTE)
    return "\n".join(steps), notes


POSTS_NOTES = {
    Posting.IN_ORDER: "the case's lines are POSTed one by one, each once the previous one's response headers are in "
                      "(the server has it); earlier ones stay open in the background, `wait` collects their answers",
    Posting.AT_ONCE: "the case's lines are POSTed all at once, in the background; `wait` collects their answers",
}
HEADERS_DIR = 'H=$(mktemp -d)'  # each background POST dumps its response headers here: their arrival is the cue


def _several_posts(url: str, lines: Sequence[bytes], posts: Posting, version: str | None) -> list[str]:
    """One curl per line, as `posts` sends them, then `wait` for every answer.

    In order, a POST starts once the previous one's response headers are in, while that one may still be open
    (a cancel must reach the server while its request is in flight): each but the last runs in the background.
    """
    session = version is not None
    steps = [HEADERS_DIR] if posts is Posting.IN_ORDER else []
    for index, line in enumerate(lines):
        headers = _headers(parse_body(line), version, session=session)
        if posts is Posting.AT_ONCE:
            steps.append(f"{{ {_curl(url, line, headers)}; }} &")
        elif index < len(lines) - 1:
            dump = f'"$H/{index + 1}"'
            steps.append(f"{{ {_curl(url, line, headers, dump_headers=dump)}; }} &")
            # Headers in (or that curl gave up): the server has this request; the next POST may go.
            steps.append(f"while [ ! -s {dump} ] && kill -0 $! 2>/dev/null; do sleep 0.1; done")
        else:
            steps.append(_curl(url, line, headers))
    steps.append("wait")
    if posts is Posting.IN_ORDER:
        steps.append('rm -r "$H"')
    return steps


def _headers(message: object, version: str | None, *, session: bool, changes: HeaderChanges = ()) -> dict[str, str]:
    """The headers of one POST, built as the streamable HTTP transport builds them: Accept, Content-Type, the MCP
    headers of the body, the session id ($SID) once there is a session, then the case's own changes."""
    headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json", **mcp_headers(message, version)}
    if session:
        headers[SESSION_HEADER] = SESSION_VARIABLE
    for name, value in changes:
        set_header(headers, name, value)
    return headers


def _header_argument(name: str, value: str) -> str:
    """`-H`'s argument, quoted for the shell; the session id is the shell variable the initialize POST set."""
    if value == SESSION_VARIABLE:
        return f'"{name}: {SESSION_VARIABLE}"'
    return shlex.quote(f"{name}: {value}")


def _curl(url: str, frame: bytes, headers: dict[str, str], *, capture_session: bool = False,
          dump_headers: str | None = None) -> str:
    """One POST as a curl command with exactly `headers` (the initialize one saves the Mcp-Session-Id into $SID;
    `dump_headers`: the file its response headers go to), given up after REPRODUCTION_SECONDS (a hang's answer,
    or a response stream the server keeps open)."""
    parts = ["curl", "-sS", "--max-time", str(REPRODUCTION_SECONDS), "-X", "POST", shlex.quote(url)]
    parts += [item for name, value in headers.items() for item in ("-H", _header_argument(name, value))]
    if dump_headers:
        parts += ["-D", dump_headers]
    if is_printable(frame):
        command = " ".join([*parts, "--data-binary", shlex.quote(frame.decode("utf-8"))])
    else:
        command = f"printf '%b' {shlex.quote(printf_escape(frame))} | " + " ".join([*parts, "--data-binary", "@-"])
    if capture_session:
        return f"SID=$({command} -D - -o /dev/null | tr -d '\\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')"
    return command + "; echo"


def finding_reproduction(server: ServerTarget, finding: Finding) -> tuple[str, list[str]]:
    """The shell reproduction of a finding's frames, POSTed as its case sends them."""
    case = finding.case
    return reproduction(server, finding.frames, case.posts if case else Posting.ONE, case.http_headers if case else ())


def reproduction(server: ServerTarget, frames: Sequence[bytes], posts: Posting = Posting.ONE,
                 case_headers: HeaderChanges = ()) -> tuple[str, list[str]]:
    """The shell reproduction for a stdio command (all frames in one go) or an HTTP URL (as `posts` says, with the
    case's own header changes)."""
    if server.kind is ServerKind.URL:
        return curl_reproduction(server, frames, posts, case_headers)
    if server.kind is ServerKind.COMMAND:
        command, notes = shell_reproduction(server.command, frames, server.env_names)
        if any(WORKSPACE_PLACEHOLDER in word for word in (*server.command, server.cwd or "")):
            notes = [*notes, WORKSPACE_NOTE]
        return (f"cd {shlex.quote(server.cwd)} && {command}" if server.cwd else command), notes
    return "", [f"{server.label} is a handler in this process: no shell command can reach it"]
