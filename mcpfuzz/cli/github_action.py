"""The logic of the repository's GitHub Action (action.yml): its inputs as an `mcpfuzz` command line, its outputs.

The composite action installs mcpfuzz into a venv of its own, passes every input as an `MCPFUZZ_INPUT_<NAME>`
variable and runs this module with that venv's python, so the server's command still finds the job's own `python`
on PATH. This module runs mcpfuzz (JSON, SARIF, JUnit and HTML reports), appends the Markdown summary to the job
summary, names the artifact, writes the step outputs, and always exits 0 so that the corpus, SARIF and artifact
steps after it still run; the action's last step fails the job with mcpfuzz's own exit status.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PREFIX = "MCPFUZZ_INPUT_"
# Every input of action.yml (tests/test_github_action.py checks that the two lists agree).
INPUTS = ("command", "url", "servers-file", "server", "config-file", "mode", "budget", "duration", "fail-on",
          "baseline", "corpus", "args", "report-prefix", "artifact-name", "snapshot")
MODES = ("run", "soak")
EXIT_ERROR = 2
# The job's place in a matrix (strategy.job-index and job-total), which no default variable of the runner carries.
JOB_INDEX, JOB_TOTAL = "MCPFUZZ_JOB_INDEX", "MCPFUZZ_JOB_TOTAL"
# Characters upload-artifact refuses in a name.
NOT_IN_ARTIFACT_NAMES = re.compile(r'["<>:|*?\\/\r\n]+')


class ActionError(ValueError):
    """Inputs that do not make one mcpfuzz command: said as a workflow error annotation."""


@dataclass(frozen=True)
class ActionPlan:
    """The mcpfuzz command line the inputs ask for, and the report files it writes."""

    argv: list[str]
    json_path: str
    sarif_path: str
    junit_path: str
    html_path: str
    summary_path: str
    prefix: str


def read_inputs(environ: Mapping[str, str]) -> dict[str, str]:
    """The action's inputs by name, from the variables the composite step sets (empty when not given)."""
    return {name: environ.get(PREFIX + name.upper().replace("-", "_"), "").strip() for name in INPUTS}


def plan(inputs: Mapping[str, str], summary_path: str) -> ActionPlan:
    """The command line for these inputs (ActionError when they contradict each other)."""
    mode = inputs["mode"] or "run"
    if mode not in MODES:
        raise ActionError(f"mode is {mode!r}; use run or soak")
    servers = [name for name in ("command", "url", "servers-file") if inputs[name]]
    if len(servers) > 1:
        raise ActionError(f"give one of command, url and servers-file, not {' and '.join(servers)}")
    if inputs["server"] and not inputs["servers-file"]:
        raise ActionError("server names an entry of servers-file; give servers-file too")
    prefix = inputs["report-prefix"] or f"mcpfuzz-{mode}"
    paths = {"json": f"{prefix}.json", "sarif": f"{prefix}.sarif", "junit-xml": f"{prefix}.xml",
             "html": f"{prefix}.html"}
    argv = ["mcpfuzz", mode]
    if inputs["config-file"]:
        argv += ["--config-file", inputs["config-file"]]
    if mode == "run" and inputs["budget"]:
        argv += ["--budget", inputs["budget"]]
    if mode == "soak" and inputs["duration"]:
        argv += ["--duration", inputs["duration"]]
    for name in ("fail-on", "corpus", "baseline", "servers-file"):
        if inputs[name]:
            argv += [f"--{name}", inputs[name]]
    if inputs["server"]:
        argv += ["--server", inputs["server"]]
    if inputs.get("snapshot"):
        if mode != "run":
            raise ActionError("snapshot is checked by a run; use it with mode: run")
        argv += ["--snapshot", inputs["snapshot"]]
    for option, path in paths.items():
        argv += [f"--{option}", path]
    argv += ["--summary-md", summary_path]
    try:
        argv += shlex.split(inputs["args"])
    except ValueError as error:
        raise ActionError(f"args: cannot split {inputs['args']!r} into words: {error}") from None
    if inputs["url"]:
        argv.append(inputs["url"])
    elif inputs["command"]:
        try:
            argv += ["--", *shlex.split(inputs["command"])]
        except ValueError as error:
            raise ActionError(f"command: cannot split {inputs['command']!r} into words: {error}") from None
    return ActionPlan(argv, paths["json"], paths["sarif"], paths["junit-xml"], paths["html"], summary_path, prefix)


def leg_name(prefix: str, environ: Mapping[str, str]) -> str:
    """This use of the action in its job: the report prefix and the job, plus the leg's number in a matrix.

    Every leg of a matrix is the same job: the leg's number keeps their artifacts apart (upload-artifact refuses a
    name used twice in a workflow run) and their SARIF categories (code scanning replaces the alerts of a category
    with each upload to it, so legs sharing one would close each other's alerts).
    """
    name = "-".join(part for part in (prefix, environ.get("GITHUB_JOB", "")) if part)
    index, total = environ.get(JOB_INDEX, ""), environ.get(JOB_TOTAL, "")
    if index and total not in ("", "1"):
        name += f"-{index}"
    return NOT_IN_ARTIFACT_NAMES.sub("-", name)


def artifact_name(given: str, prefix: str, environ: Mapping[str, str]) -> str:
    """The artifact's name: the one given (without the characters upload-artifact refuses), else the leg's name."""
    return NOT_IN_ARTIFACT_NAMES.sub("-", given) if given else leg_name(prefix, environ)


def server_program(argv: list[str]) -> str:
    """Where the server command's program is found on PATH (the job's, not mcpfuzz's venv), for the log."""
    if "--" not in argv:
        return ""
    program = argv[argv.index("--") + 1]
    return shutil.which(program) or f"{program} (not found on PATH)"


def write_outputs(path: str | None, outputs: Mapping[str, str]) -> None:
    """Step outputs as `name=value` lines in $GITHUB_OUTPUT (printed when there is none, e.g. locally)."""
    text = "".join(f"{name}={value}\n" for name, value in outputs.items())
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(text)
    else:
        sys.stdout.write(text)


def count_findings(json_path: str) -> str:
    """How many findings the JSON report holds ('' when it was not written)."""
    try:
        return str(len(json.loads(Path(json_path).read_text(encoding="utf-8"))["findings"]))
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def main(environ: Mapping[str, str] = os.environ) -> int:
    """Run mcpfuzz as the inputs ask; summary and outputs written; 0 unless the action itself failed."""
    inputs = read_inputs(environ)
    with tempfile.TemporaryDirectory(prefix="mcpfuzz-action-") as scratch:
        summary = str(Path(scratch) / "summary.md")
        try:
            action = plan(inputs, summary)
        except ActionError as error:
            sys.stdout.write(f"::error title=mcpfuzz action::{error}\n")
            write_outputs(environ.get("GITHUB_OUTPUT"), {"exit-code": str(EXIT_ERROR)})
            return 0
        found = server_program(action.argv)
        sys.stdout.write(f"::group::{shlex.join(action.argv)}\n"
                         + (f"the server's program: {found}\n" if found else "") + "::endgroup::\n")
        sys.stdout.flush()
        status = subprocess.run([sys.executable, "-m", "mcpfuzz.cli", *action.argv[1:]], check=False).returncode
        step_summary = environ.get("GITHUB_STEP_SUMMARY")
        if step_summary and Path(summary).is_file():
            # Appended, not replaced: other steps' summaries stay.
            with open(step_summary, "a", encoding="utf-8") as file:
                file.write(Path(summary).read_text(encoding="utf-8") + "\n")
    sarif = action.sarif_path if Path(action.sarif_path).is_file() else ""
    write_outputs(environ.get("GITHUB_OUTPUT"), {
        "exit-code": str(status), "findings": count_findings(action.json_path), "json": action.json_path,
        "sarif": sarif, "junit-xml": action.junit_path, "html": action.html_path,
        # Every report, --all-servers' per-server ones (PREFIX.NAME.json ...) too: the artifact's glob.
        "reports": f"{action.prefix}.*",
        "artifact-name": artifact_name(inputs["artifact-name"], action.prefix, environ),
        "sarif-category": leg_name(action.prefix, environ)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
