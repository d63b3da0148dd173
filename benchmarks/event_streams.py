"""Fixed-seed event streams and frame logs of a few servers, recorded to compare one version of mcpfuzz with another.

A refactor that moves rules unchanged must send the same frames and raise the same events::

    python benchmarks/event_streams.py record DIR          # before the change
    python benchmarks/event_streams.py compare DIR         # after it: the same runs, compared with DIR
    python benchmarks/event_streams.py compare DIR --with OTHER   # two recordings, no run

Each run is `mcpfuzz run --seed 5 --max-examples 10` on one server (the bundled example, the stdio test servers,
the HTTP test server over streamable HTTP and legacy SSE). What depends on the clock or the machine is left out
before comparing: timestamps and every other float (durations, rates), resource samples, pids, ports and temporary
paths. `compare` prints the first differing line of each stream with a little context, never a whole log.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SERVERS = ROOT / "tests" / "servers"
COMMON = ["--seed", "5", "--max-examples", "10", "--no-replay", "-q", "--budget", "120"]
HTTP = f"{PYTHON} {SERVERS / 'http_server.py'} --port {{port}}"

# Name -> the arguments after `mcpfuzz run` and the common options.
RUNS: dict[str, list[str]] = {
    "example": ["--", PYTHON, "-m", "mcpfuzz.example"],
    "mcp_server": ["--", PYTHON, str(SERVERS / "mcp_server.py")],
    "mcp_server_crashing": ["--", PYTHON, str(SERVERS / "mcp_server.py"), "--bug", "crash-batch",
                            "--bug", "double-reply", "--bug", "notify-reply"],
    "hostile_double_init": ["--", PYTHON, str(SERVERS / "hostile.py"), "double-init"],
    "http_streamable": ["--launch", HTTP, "http://127.0.0.1:{port}/mcp"],
    "http_sse": ["--launch", f"{HTTP} --mode sse", "--transport", "sse", "http://127.0.0.1:{port}/sse"],
}
# Events that sample the machine over time: how many there are depends on the clock.
TIMED_EVENTS = frozenset({"ResourcesSampled"})
# Notices said or not by how fast the machine started the server (a standby is kept past STANDBY_WORTH).
TIMED_NOTICE = "standby"
# Runs whose streams differ between two runs of the same code: their differences are shown, not counted.
UNSTABLE = {
    "http_sse events.jsonl": "over legacy SSE harness requests and restarts depend on timing (stats)",
    "example events.jsonl": "a cancelled add_note may or may not have stored its note when the cancel lands",
}
# Runs whose harness requests (ids from HARNESS_FIRST_ID up to the ids sent aside) depend on timing: their frames are
# compared without them.
TIMED_HARNESS = frozenset({"http_sse"})
HARNESS_ID = re.compile(r'^\{"jsonrpc":"2\.0","id":(\d+),')
# Keys whose values are the machine's, not the run's.
VOLATILE_KEYS = frozenset({"timestamp", "pid", "rss", "fds", "threads", "processes", "resources"})
PORT = re.compile(rb"127\.0\.0\.1:\d+")
# A duration said in words ("about 98s", "took 0.4 s", "12 ms"): how long the machine took.
SECONDS = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")
RUN_TIMEOUT = 300


def normalise(value: Any) -> Any:
    """The value with floats, volatile keys and ports replaced by placeholders."""
    if isinstance(value, dict):
        return {key: "<volatile>" if key in VOLATILE_KEYS else normalise(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalise(item) for item in value]
    if isinstance(value, float):
        return "<float>"
    if isinstance(value, str):
        return SECONDS.sub("<N>s", PORT.sub(b"127.0.0.1:PORT", value.encode()).decode())
    return value


def kept(event: dict[str, Any]) -> bool:
    """False for an event whose presence depends on the clock."""
    timed_notice = event.get("event") == "Notice" and TIMED_NOTICE in event.get("message", "")
    return event.get("event") not in TIMED_EVENTS and not timed_notice


def record_one(name: str, out: Path) -> str:
    """Run one server, write its normalised events and frames into `out`; returns the exit status as text."""
    with tempfile.TemporaryDirectory(prefix=f"streams-{name}-") as work:
        events, frames = Path(work) / "events.jsonl", Path(work) / "frames.log"
        command = [str(Path(PYTHON).parent / "mcpfuzz"), "run", *COMMON, "--corpus", str(Path(work) / "corpus"),
                   "--events", str(events), "--log-frames", str(frames), *RUNS[name]]
        done = subprocess.run(command, cwd=work, capture_output=True, timeout=RUN_TIMEOUT, check=False)
        lines = [json.dumps(normalise(event), sort_keys=True).replace(work, "<work>")
                 for event in map(json.loads, events.read_text().splitlines()) if kept(event)]
        (out / f"{name}.events.jsonl").write_text("\n".join(lines) + "\n")
        (out / f"{name}.frames.log").write_bytes(PORT.sub(b"127.0.0.1:PORT", frames.read_bytes()))
        return f"exit {done.returncode}"


def stream(folder: Path, name: str, suffix: str) -> list[str]:
    """One recorded stream's lines, normalised again (so recordings made with older rules still compare)."""
    lines = (folder / f"{name}.{suffix}").read_text(errors="replace").splitlines()
    if suffix == "frames.log":
        return [line for line in lines if name not in TIMED_HARNESS or not _harness(line)]
    return [json.dumps(normalise(event), sort_keys=True) for event in map(json.loads, lines) if kept(event)]


def _harness(line: str) -> bool:
    """True for a frame of a harness request (an id of the range the session numbers its own requests from)."""
    found = HARNESS_ID.match(line)
    return found is not None and 10_000 <= int(found.group(1)) < 2**31


def first_difference(one: list[str], two: list[str], context: int = 2) -> str:
    """The first line where two streams differ, with a few lines before it; "" when they are the same."""
    for index in range(max(len(one), len(two))):
        left = one[index] if index < len(one) else "<end>"
        right = two[index] if index < len(two) else "<end>"
        if left != right:
            before = "\n".join(f"    {line[:200]}" for line in one[max(0, index - context):index])
            return (f"line {index + 1} of {len(one)} / {len(two)}:\n{before}\n  - {left[:400]}\n  + {right[:400]}")
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["record", "compare"])
    parser.add_argument("dir", type=Path, help="where the streams are recorded (compare: the recorded ones)")
    parser.add_argument("--with", dest="other", type=Path, help="compare: these recorded streams, not a fresh run")
    parser.add_argument("--only", action="append", choices=sorted(RUNS), help="one run (repeatable)")
    args = parser.parse_args()
    names = args.only or list(RUNS)
    out = args.dir if args.action == "record" else args.other or Path(tempfile.mkdtemp(prefix="streams-now-"))
    out.mkdir(parents=True, exist_ok=True)
    differing = 0
    for name in names:
        if args.action == "record" or args.other is None:
            status = record_one(name, out)
        if args.action == "record":
            print(f"{name}: recorded ({status})")
            continue
        for suffix in ("events.jsonl", "frames.log"):
            difference = first_difference(stream(args.dir, name, suffix), stream(out, name, suffix))
            reason = UNSTABLE.get(f"{name} {suffix}")
            unstable = f" (not counted: {reason})" if reason and difference else ""
            differing += bool(difference) and not unstable
            print(f"{name} {suffix}{unstable}: "
                  + (f"DIFFERENT at {difference}" if difference else f"same ({len(stream(out, name, suffix))} lines)"))
    if args.action == "compare":
        print(f"{differing} differing streams; the compared streams are in {out}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
