"""Runs a composite action.yml the way a GitHub runner does, on this machine, for tests.

Each `run:` step is executed with bash in the job's workspace, with the runner's files and variables
(GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STEP_SUMMARY, RUNNER_TEMP, GITHUB_ACTION_PATH, ...) faked
in a temp folder, and what it writes there is applied as the runner applies it (outputs to the steps
context, GITHUB_ENV and GITHUB_PATH to the later steps and to the job). A `uses:` step is recorded, not run:
its reference must be pinned to a full commit SHA, its `with:` inputs are evaluated, the paths it would
read are globbed in the workspace, and it reports the outputs (or the failure) the test gives it.
Conditions, `continue-on-error`, outcome and conclusion follow the runner's composite-action rules.
"""

from __future__ import annotations

import glob
import json
import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import yaml

from tests.action_expressions import Scope, UnsupportedExpression, condition, render

PINNED = re.compile(r"[0-9a-f]{40}")
ANNOTATION = re.compile(r"^::(?P<kind>warning|error|notice)(?: [^:]*)?::(?P<message>.*)$", re.MULTILINE)
RUN_KEYS = {"name", "id", "if", "run", "shell", "env", "continue-on-error", "working-directory"}
USES_KEYS = {"name", "id", "if", "uses", "with", "env", "continue-on-error"}
# The actions a `uses:` step may name, and which of its inputs holds paths in the workspace that must exist
# when it runs (None: nothing to check; actions/cache/restore creates its path).
KNOWN_ACTIONS: dict[str, str | None] = {
    "actions/setup-python": None,
    "actions/cache/restore": None,
    "actions/cache/save": "path",
    "actions/upload-artifact": "path",
    "github/codeql-action/upload-sarif": "sarif_file",
}
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]  # the runner's `shell: bash`


class Outcome(str, Enum):
    """A step's outcome or conclusion, as the steps context spells it."""

    SUCCESS = "success"
    FAILURE = "failure"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Job:
    """The job the action runs in: its folders, its environment when the action starts, and its contexts."""

    workspace: Path
    runner_temp: Path
    env: Mapping[str, str]
    github: Mapping[str, object]
    strategy: Mapping[str, object] = field(default_factory=lambda: {"job-index": 0, "job-total": 1})
    matrix: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class FakeActions:
    """What the recorded `uses:` steps report: outputs per action name, and the actions that fail."""

    outputs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    failing: frozenset[str] = frozenset()


@dataclass
class StepRecord:
    """One step as it ran (or was recorded, or skipped)."""

    name: str
    id: str
    uses: str  # the action name of a `uses:` step, '' for `run:`
    ref: str  # the commit a `uses:` step is pinned to
    inputs: dict[str, str]  # a `uses:` step's `with:`, evaluated
    outcome: Outcome
    conclusion: Outcome
    log: str = ""  # a run step's stdout and stderr
    outputs: dict[str, str] = field(default_factory=dict)
    globbed: dict[str, list[str]] = field(default_factory=dict)  # path pattern -> files it matched


@dataclass
class ActionRun:
    """What running the action did."""

    steps: list[StepRecord]
    outputs: dict[str, str]
    result: Outcome
    env: dict[str, str]  # the job's environment after the action (GITHUB_ENV and GITHUB_PATH applied)
    summary: str

    def step(self, name: str) -> StepRecord:
        """The step with this name or id."""
        for step in self.steps:
            if name in (step.name, step.id):
                return step
        raise KeyError(f"no step {name!r}; steps: {[step.name for step in self.steps]}")

    def annotations(self, kind: str) -> list[str]:
        """The messages of every `::KIND::` workflow command the steps printed."""
        return [match["message"] for step in self.steps for match in ANNOTATION.finditer(step.log)
                if match["kind"] == kind]

    def log(self) -> str:
        """Every step's log, headed by its name, for assertion messages."""
        return "".join(f"--- {step.name} ({step.outcome.value})\n{step.log}" for step in self.steps)


def parse_command_file(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT / GITHUB_ENV lines: `name=value`, or `name<<DELIMITER` then lines up to DELIMITER."""
    values: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            for body_line in lines:
                if body_line == delimiter:
                    break
                body.append(body_line)
            else:
                raise ValueError(f"{name}<<{delimiter} never closed")
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        else:
            raise ValueError(f"not a command-file line: {line!r}")
    return values


def split_uses(uses: str) -> tuple[str, str]:
    """`owner/repo[/path]@ref` as the action's name and the ref; refuses anything not pinned to a commit."""
    name, _, ref = uses.partition("@")
    if uses.startswith(("./", "docker://")) or not ref:
        raise UnsupportedExpression(f"uses: {uses!r} is not owner/repo@ref")
    if not PINNED.fullmatch(ref):
        raise AssertionError(f"uses: {uses!r} is not pinned to a full 40-hex commit SHA")
    if name not in KNOWN_ACTIONS:
        raise UnsupportedExpression(f"uses: {name!r} is not an action this runner knows how to fake")
    return name, ref


def glob_paths(patterns: str, workspace: Path) -> dict[str, list[str]]:
    """Each non-empty line of a path input and the files it matches under the workspace (`**` recursive)."""
    found: dict[str, list[str]] = {}
    for pattern in (line.strip() for line in patterns.splitlines()):
        if not pattern or pattern.startswith("!"):
            continue
        found[pattern] = sorted(name for name in glob.glob(pattern, root_dir=workspace, recursive=True)
                                if (workspace / name).is_file() or (workspace / name).is_dir())
    return found


def run_bash(script: str, env: Mapping[str, str], cwd: Path, timeout: float) -> tuple[int, str]:
    """A `run:` script under the runner's bash, its own process group killed if it outlives the timeout."""
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False, dir=env["RUNNER_TEMP"]) as file:
        file.write(script)
    process = subprocess.Popen([*BASH, file.name], cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        log, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        log, _ = process.communicate()
        log += f"\n[action_runner: the step was still running after {timeout:.0f}s and was killed]\n"
    finally:
        os.unlink(file.name)
    return process.returncode, log


class CompositeRunner:
    """One run of a composite action: its steps in order, under the runner's rules."""

    def __init__(self, action_dir: Path, job: Job, fakes: FakeActions, step_timeout: float) -> None:
        self.action_dir = action_dir
        self.definition = yaml.safe_load((action_dir / "action.yml").read_text(encoding="utf-8"))
        if self.definition["runs"]["using"] != "composite":
            raise UnsupportedExpression("only composite actions")
        self.job = job
        self.fakes = fakes
        self.step_timeout = step_timeout
        self.env = dict(job.env)
        self.steps_context: dict[str, dict[str, object]] = {}
        self.failed = False
        self.summary = ""
        event_path = job.runner_temp / "event.json"
        event_path.write_text(json.dumps(job.github.get("event", {})), encoding="utf-8")
        self.github = {**job.github, "action_path": str(action_dir), "workspace": str(job.workspace),
                       "event_path": str(event_path)}

    def inputs(self, given: Mapping[str, str]) -> dict[str, str]:
        """The action's inputs: the given ones over the declared defaults; an undeclared one is an error."""
        declared = self.definition.get("inputs", {})
        unknown = set(given) - set(declared)
        if unknown:
            raise AssertionError(f"inputs not declared in action.yml: {sorted(unknown)}")
        values = {}
        for name, spec in declared.items():
            value = given.get(name, spec.get("default", ""))
            if name not in given and spec.get("required") and not value:
                raise AssertionError(f"required input {name!r} not given")
            values[name] = str(value).lower() if isinstance(value, bool) else str(value)
        return values

    def scope(self, inputs: Mapping[str, str]) -> Scope:
        return Scope({"inputs": inputs, "github": self.github, "runner": self.runner_context(),
                      "strategy": self.job.strategy, "matrix": self.job.matrix, "steps": self.steps_context,
                      "env": self.env}, self.status)

    def runner_context(self) -> dict[str, str]:
        return {"temp": str(self.job.runner_temp), "os": "Linux", "arch": "X64", "name": "action-runner"}

    def status(self, name: str) -> bool:
        return {"success": not self.failed, "failure": self.failed, "always": True, "cancelled": False}[name]

    def default_env(self, files: Mapping[str, Path]) -> dict[str, str]:
        """The variables a runner sets for every step, the step's own command files included."""
        github = self.github
        return {"CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux", "RUNNER_TEMP": str(self.job.runner_temp),
                "GITHUB_WORKSPACE": str(self.job.workspace), "GITHUB_ACTION_PATH": str(self.action_dir),
                "GITHUB_EVENT_PATH": str(github["event_path"]), "GITHUB_EVENT_NAME": str(github.get("event_name", "")),
                "GITHUB_JOB": str(github.get("job", "")), "GITHUB_REPOSITORY": str(github.get("repository", "")),
                "GITHUB_REF_NAME": str(github.get("ref_name", "")), "GITHUB_RUN_ID": str(github.get("run_id", "")),
                **{f"GITHUB_{name.upper()}": str(path) for name, path in files.items()}}

    def run(self, given: Mapping[str, str]) -> ActionRun:
        inputs = self.inputs(given)
        records = []
        for number, step in enumerate(self.definition["runs"]["steps"]):
            records.append(self.run_step(number, step, inputs))
        outputs = {name: render(str(spec["value"]), self.scope(inputs))
                   for name, spec in self.definition.get("outputs", {}).items()}
        return ActionRun(records, outputs, Outcome.FAILURE if self.failed else Outcome.SUCCESS, self.env,
                         self.summary)

    def run_step(self, number: int, step: Mapping[str, object], inputs: Mapping[str, str]) -> StepRecord:
        allowed = USES_KEYS if "uses" in step else RUN_KEYS
        if set(step) - allowed:
            raise UnsupportedExpression(f"step keys {sorted(set(step) - allowed)} in {step.get('name')!r}")
        scope = self.scope(inputs)
        name = str(step.get("name") or step.get("uses") or step.get("run"))
        step_id = str(step.get("id", f"__step{number}"))
        uses, ref = split_uses(str(step["uses"])) if "uses" in step else ("", "")
        record = StepRecord(name, step_id, uses, ref, {}, Outcome.SKIPPED, Outcome.SKIPPED)
        if condition(str(step.get("if", "success()")), scope):
            if uses:
                self.record_uses(record, step, scope)
            else:
                self.run_script(record, step, scope)
            record.conclusion = record.outcome
            if record.outcome is Outcome.FAILURE and self.continue_on_error(step, scope):
                record.conclusion = Outcome.SUCCESS
            if record.conclusion is Outcome.FAILURE:
                self.failed = True
        if "id" in step:
            self.steps_context[step_id] = {"outputs": record.outputs, "outcome": record.outcome.value,
                                           "conclusion": record.conclusion.value}
        return record

    def continue_on_error(self, step: Mapping[str, object], scope: Scope) -> bool:
        value = step.get("continue-on-error", False)
        return value if isinstance(value, bool) else render(str(value), scope) == "true"

    def record_uses(self, record: StepRecord, step: Mapping[str, object], scope: Scope) -> None:
        given = step.get("with") or {}
        assert isinstance(given, Mapping)
        record.inputs = {key: render(str(value).lower() if isinstance(value, bool) else str(value), scope)
                         for key, value in given.items()}
        path_input = KNOWN_ACTIONS[record.uses]
        if path_input is not None:
            record.globbed = glob_paths(record.inputs.get(path_input, ""), self.job.workspace)
        record.outputs = dict(self.fakes.outputs.get(record.uses, {}))
        record.outcome = Outcome.FAILURE if record.uses in self.fakes.failing else Outcome.SUCCESS
        if record.uses == "actions/setup-python" and record.inputs.get("update-environment", "true") != "false":
            # What setup-python does unless told not to: its interpreter first on the PATH of every later step.
            python_dir = str(Path(record.outputs["python-path"]).parent)
            self.env["PATH"] = os.pathsep.join([python_dir, self.env.get("PATH", "")])
            self.env["pythonLocation"] = str(Path(python_dir).parent)

    def run_script(self, record: StepRecord, step: Mapping[str, object], scope: Scope) -> None:
        if step.get("shell") != "bash":
            raise UnsupportedExpression(f"shell {step.get('shell')!r} in {record.name!r}; only bash")
        folder = Path(tempfile.mkdtemp(prefix="step-", dir=self.job.runner_temp))
        files = {name: folder / name for name in ("output", "env", "path", "step_summary")}
        for path in files.values():
            path.touch()
        env = {**self.env, **self.default_env(files)}
        step_env = step.get("env") or {}
        assert isinstance(step_env, Mapping)
        env.update({key: render(str(value), scope) for key, value in step_env.items()})
        cwd = self.job.workspace / render(str(step.get("working-directory", ".")), scope)
        status, record.log = run_bash(render(str(step["run"]), scope), env, cwd, self.step_timeout)
        record.outcome = Outcome.SUCCESS if status == 0 else Outcome.FAILURE
        record.outputs = parse_command_file(files["output"].read_text(encoding="utf-8"))
        self.env.update(parse_command_file(files["env"].read_text(encoding="utf-8")))
        added = [line for line in files["path"].read_text(encoding="utf-8").splitlines() if line]
        if added:
            self.env["PATH"] = os.pathsep.join([*reversed(added), self.env.get("PATH", "")])
        self.summary += files["step_summary"].read_text(encoding="utf-8")


def run_action(action_dir: Path, inputs: Mapping[str, str], job: Job, fakes: FakeActions | None = None,
               step_timeout: float = 900.0) -> ActionRun:
    """Run the composite action in `action_dir` with these inputs in this job."""
    return CompositeRunner(action_dir, job, fakes or FakeActions(), step_timeout).run(inputs)
