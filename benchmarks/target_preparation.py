"""How long preparing one call target takes (its schema checked and compiled, its simplest values drawn), and
Hypothesis' warm-up on a machine that never ran mcpfuzz. Prints figures.

Run from the repository root:  python benchmarks/target_preparation.py [--repeat N]

Each repetition prepares a schema never seen by the process before (a `$comment` of its own in every object:
the caches key on JSON text), so the figure is a first preparation, as a server's many distinct tools get.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

from figures import Figure  # noqa: E402
from mcpfuzz.strategies.arguments.coverage import coverage_calls  # noqa: E402
from nested_server import nested_schema  # noqa: E402

from mcpfuzz.engine.searches.hypothesis_bridge import HypothesisWarmup  # noqa: E402
from mcpfuzz.engine.surface.targets import CallTarget, Selection, plan_targets  # noqa: E402
from mcpfuzz.jsonrpc.target_kind import TargetKind  # noqa: E402

SMALL_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TARGET_MILLIS = 50.0  # preparing an ordinary schema (up to about 50 properties) takes well under this
WARMUP_CODE = ("import time; t = time.perf_counter()\n"
               "from mcpfuzz.engine.searches.hypothesis_bridge import HypothesisWarmup\n"
               "HypothesisWarmup.start().wait(); print(time.perf_counter() - t)\n")


NAMED = ("properties", "patternProperties", "$defs", "definitions")  # keywords holding subschemas by name


def _fresh(schema: Any, repetition: int) -> Any:
    """`schema` with a `$comment` of the repetition in every subschema: new to the process's caches, drawn the same."""
    if isinstance(schema, list):
        return [_fresh(item, repetition) for item in schema]
    if not isinstance(schema, dict):
        return schema
    fresh = {key: {name: _fresh(sub, repetition) for name, sub in value.items()}
             if key in NAMED and isinstance(value, dict) else _fresh(value, repetition)
             for key, value in schema.items()}
    # Beside a $ref, 2020-12 would apply the comment as a schema of its own (allOf): not drawn the same.
    return fresh if "$ref" in fresh else {**fresh, "$comment": f"repetition {repetition}"}


def _target(schema: dict[str, Any], repetition: int) -> CallTarget:
    """A tool target of `schema`, unprepared, every part of its schema new to the process."""
    fresh = _fresh(schema, repetition)
    return plan_targets({TargetKind.TOOL: [{"name": "bench", "inputSchema": fresh}]}, Selection(), seed=1).targets[0]


def prepare_millis(schema: dict[str, Any], repetition: int) -> float:
    """Milliseconds to prepare one target of `schema` (CallTarget.prepare: what a run does once per target)."""
    target = _target(schema, repetition)
    started = time.perf_counter()
    target.prepare()
    return (time.perf_counter() - started) * 1e3


def coverage_millis(schema: dict[str, Any], repetition: int) -> float:
    """Milliseconds to make one prepared target's coverage calls (the coverage phase's first use of it)."""
    target = _target(schema, repetition)
    prepared = target.prepare()
    started = time.perf_counter()
    coverage_calls(prepared.schema, prepared.plain, prepared.populated, seed=target.seed)
    return (time.perf_counter() - started) * 1e3


def fresh_warmup_seconds() -> float:
    """Seconds HypothesisWarmup takes with an empty Hypothesis home (its Unicode tables built), in a new process."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": home}
        out = subprocess.run([sys.executable, "-c", WARMUP_CODE], capture_output=True, text=True, env=env,
                             cwd=ROOT, check=True, timeout=600).stdout
    return float(out.strip())


def typed_tool_schemas() -> dict[str, dict[str, Any]]:
    """The typed tools' inputSchemas as the real mcp 2.x SDK serves them ($defs, anyOf, titles); {} without mcp."""
    try:
        import anyio
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        return {}
    sys.path.insert(0, str(ROOT / "tests" / "sdk_servers"))
    from typed_tools import register

    app = MCPServer("bench", version="0")
    register(app)
    tools = anyio.run(app.list_tools)
    return {tool.name: tool.model_dump(mode="json", by_alias=True, exclude_none=True)["inputSchema"]
            for tool in tools}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="repetitions of each figure (default 9)")
    parser.add_argument("--warmups", type=int, default=2, help="fresh-home warm-ups measured (default 2)")
    args = parser.parse_args()
    HypothesisWarmup.start().wait()
    _target(SMALL_SCHEMA, -1).prepare()  # the process's first draw is not a target's cost
    schemas = {"small schema (one string)": SMALL_SCHEMA, "30-property schema": nested_schema(30),
               "50-property schema": nested_schema(50),
               **{f"mcp 2.3.0 typed tool {name}": schema for name, schema in typed_tool_schemas().items()}}
    figures = [(Figure(f"prepare one target: {label}", "ms", 2), prepare_millis, schema)
               for label, schema in schemas.items()]
    figures += [(Figure(f"coverage calls of one target: {label}", "ms", 1), coverage_millis, schema)
                for label, schema in schemas.items() if "typed" not in label]
    # Preparations first, all interleaved; then the coverage figures (their garbage would be collected during
    # the preparations measured after them).
    for measured in (prepare_millis, coverage_millis):
        for repetition in range(args.repeat):
            for figure, measure, schema in figures:
                if measure is measured:
                    figure.values.append(measure(schema, repetition))
    warmup = Figure("Hypothesis warm-up, fresh home (background, from run start)", "s", 2)
    for _ in range(args.warmups):
        warmup.values.append(fresh_warmup_seconds())
    for figure, _, _ in figures:
        print(figure.line())
    print(warmup.line())
    worst = max(figure.median for figure, measure, _ in figures if measure is prepare_millis)
    print(f"slowest preparation {worst:.2f} ms: {'within' if worst < TARGET_MILLIS else 'OVER'} the "
          f"{TARGET_MILLIS:g} ms target")


if __name__ == "__main__":
    main()
