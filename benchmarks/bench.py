"""How fast mcpfuzz calls tools, next to a raw client on the same server. Prints figures and ratios.

Run: python benchmarks/bench.py [--seconds 8] [--repeat 3]

Timed figures on a shared machine are noisy; compare the ratios measured in one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcpfuzz.strategies.schema_values import ArgumentSchema, draw_examples  # noqa: E402

from mcpfuzz.engine.config import RunConfig  # noqa: E402
from mcpfuzz.engine.events import PhaseStarted, RunFinished  # noqa: E402
from mcpfuzz.engine.runner import run  # noqa: E402
from mcpfuzz.oracles.base import all_oracles  # noqa: E402

MCP_SERVER = ROOT / "tests" / "servers" / "mcp_server.py"
HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def nested_schema(properties: int = 30) -> dict:
    """A 30-property object schema: flat typed fields, enums, bounds, formats and two nested objects."""
    kinds = [
        {"type": "string", "maxLength": 40}, {"type": "integer", "minimum": 0, "maximum": 1000},
        {"type": "number"}, {"type": "boolean"}, {"enum": ["a", "b", "c"]}, {"type": "string", "format": "uuid"},
        {"type": "array", "items": {"type": "string"}, "maxItems": 4},
    ]
    inner = {"type": "object", "properties": {f"f{i}": kinds[i % len(kinds)] for i in range(6)},
             "required": ["f0", "f1"], "additionalProperties": False}
    props = {f"p{i}": kinds[i % len(kinds)] for i in range(properties - 2)}
    props["nested_a"], props["nested_b"] = inner, {**inner, "properties": {**inner["properties"], "deep": inner}}
    return {"type": "object", "properties": props, "required": ["p0", "p1", "nested_a"],
            "additionalProperties": False}


def raw_round_trips(seconds: float) -> float:
    """A minimal client: tools/call echo, one at a time, over stdio (the ceiling for this server)."""
    process = subprocess.Popen([sys.executable, str(MCP_SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    for message in HANDSHAKE:
        process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()
    process.stdout.readline()
    count, rid, deadline = 0, 100, time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < deadline:
        rid += 1
        call = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": f"x{rid}"}}}
        process.stdin.write(json.dumps(call).encode() + b"\n")
        process.stdin.flush()
        process.stdout.readline()
        count += 1
    elapsed = time.perf_counter() - started
    process.stdin.close()
    process.wait(5)
    return count / elapsed


def mcpfuzz_calls(seconds: float, tool: str) -> float:
    """mcpfuzz's fuzz phase alone against one tool of the clean test server: calls per second."""
    marks: dict[str, float] = {}

    def listen(event: object) -> None:
        if isinstance(event, PhaseStarted):
            marks[event.name] = time.perf_counter()
        elif isinstance(event, RunFinished):
            marks["end"] = time.perf_counter()

    others = ("echo", "add", "get_note")
    config = RunConfig(command=[sys.executable, str(MCP_SERVER)], seed=1, budget=seconds + 2, timeout=5,
                       oracles=tuple(all_oracles()), phases=("probe", "fuzz"),
                       exclude_tools=tuple(t for t in others if t != tool))
    finished = anyio.run(run, config, listen)
    return finished.stats.phases.get("fuzz", 0) / (marks["end"] - marks["fuzz"])


def draw_micros(schema: dict, count: int = 200) -> float:
    """Microseconds to draw one valid argument object (the schema validator included)."""
    arguments = ArgumentSchema(schema)
    draw_examples(arguments.positive, 5, seed=0)  # build the strategy outside the timing
    started = time.perf_counter()
    values = draw_examples(arguments.positive, count, seed=1)
    return (time.perf_counter() - started) / max(1, len(values)) * 1e6


def summary(values: list[float]) -> str:
    """Median with the spread of the repetitions."""
    return f"{statistics.median(values):9.1f}  (min {min(values):.1f}, max {max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each timed run")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each figure")
    args = parser.parse_args()
    raw, small, draw_small, draw_nested = [], [], [], []
    small_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
                    "additionalProperties": False}
    for _ in range(args.repeat):
        raw.append(raw_round_trips(args.seconds))
        small.append(mcpfuzz_calls(args.seconds, "echo"))
        draw_small.append(draw_micros(small_schema))
        draw_nested.append(draw_micros(nested_schema(), count=100))
    print(f"machine: {sys.platform}, Python {sys.version.split()[0]}, {args.repeat} repetitions of {args.seconds:g}s")
    print(f"raw client, sequential tools/call (calls/s)      {summary(raw)}")
    print(f"mcpfuzz fuzz phase, small schema (calls/s)       {summary(small)}")
    print(f"draw one value, small schema (us)                {summary(draw_small)}")
    print(f"draw one value, 30-property nested schema (us)   {summary(draw_nested)}")
    print(f"ratio: mcpfuzz calls/s over raw sequential        {statistics.median(small) / statistics.median(raw):9.2f}")


if __name__ == "__main__":
    main()
