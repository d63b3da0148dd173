"""`run --workers 2` on a protected server whose tokens live 4 s (slow: a real SDK server, a real authorization
server, a whole run): the workers share the parent's renewals.

The token command counts its runs and notes which process ran it: every run is the parent's (no worker ran it), so
the run needed the renewals of one keeper, not two; and every call was served.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.auth_fixtures import PROTECTED, authorization_server
from tests.conftest import CLI, cli_env

pytestmark = pytest.mark.slow

# The resource identifier every worker's server is known by (as behind a proxy): one token serves them all. Nothing
# dials it.
SHARED_RESOURCE = "http://127.0.0.1:9/mcp"
RUN_DEADLINE = 400.0

# The token command: one line per run in RUNS, the process that ran it (the shell that `sh -c` may add skipped),
# then the authorization server's token response for the shared resource (its audience, RFC 8707).
TOKEN_SCRIPT = """\
import os, sys, urllib.parse, urllib.request
runs, issuer, resource = sys.argv[1:4]
owner = os.getppid()
with open(f"/proc/{owner}/comm") as comm:
    if comm.read().strip() in ("sh", "dash", "bash"):
        with open(f"/proc/{owner}/stat") as stat:
            owner = int(stat.read().rsplit(")", 1)[1].split()[1])
form = urllib.parse.urlencode({"grant_type": "client_credentials", "scope": "mcp", "resource": resource}).encode()
answer = urllib.request.urlopen(issuer + "/token", form).read().decode()
with open(runs, "a") as log:
    log.write(f"{owner}\\n")
print(answer)
"""


# The two commands that run workers, each bounded (the budget or the duration ends it), and where the report keeps
# the workers' counters.
MODES = {"run": (["run", "--budget", "25"], "workers"),
         "soak": (["soak", "--duration", "25", "--slice", "5", "--checkpoint-every", "60"], "soak")}


@pytest.mark.parametrize("mode", MODES)
def test_workers_share_the_parents_renewals(tmp_path: Path, mode: str) -> None:
    arguments, counters = MODES[mode]
    runs = tmp_path / "runs"
    runs.write_text("")
    script = tmp_path / "get_token.py"
    script.write_text(TOKEN_SCRIPT)
    report = tmp_path / "report.json"
    with authorization_server(tmp_path, lifetime=4) as issuer:
        command = f"{sys.executable} {script} {runs} {issuer.url} {SHARED_RESOURCE}"
        launch = f"{sys.executable} {PROTECTED} {{port}} {issuer.url} --resource {SHARED_RESOURCE}"
        # The fuzz phase only; tokens living 4 s are renewed every 2 s or so meanwhile. The auth probes are left out
        # (they would rightly say the metadata's resource is not the server's own URL), and so are the isolation
        # probes (they would take the lead worker's share of the time).
        parent = subprocess.Popen(
            [*CLI, *arguments, "http://127.0.0.1:{port}/mcp", "--launch", launch, "--workers", "2",
             "--phases", "fuzz", "--seed", "5", "--auth-token-command", command,
             "--exclude-oracles", "auth-required,auth-challenge,session-isolation",
             "--corpus", str(tmp_path / "corpus"), "--json", str(report)],
            cwd=tmp_path, env=cli_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        try:
            output, _ = parent.communicate(timeout=RUN_DEADLINE)
        finally:
            if parent.poll() is None:
                parent.kill()
                parent.wait()
        issued = issuer.issued()
    assert parent.returncode in (0, 1), output[-6000:]
    owners = [int(line) for line in runs.read_text().split()]
    # Renewed during the run (more than the first token), and only ever by the parent: no worker ran the command.
    assert len(owners) >= 2, (owners, output[-6000:])
    assert set(owners) == {parent.pid}, (owners, parent.pid, output[-6000:])
    assert len(issued) == len(owners)
    data = json.loads(report.read_text())
    per_worker = data["stats"][counters]["per_worker"]
    assert [w["worker"] for w in per_worker] == [0, 1] and all(w["cases"] > 0 for w in per_worker), per_worker
    # Every call served: no request refused for its token, no auth error, no worker on its own tokens.
    assert data["error"] is None and "HTTP 401" not in json.dumps(data["findings"]), data["findings"]
    assert "HTTP 401" not in output and "stopped lending" not in output, output[-6000:]
    # No token in anything written.
    written = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()
               and "authorization-server" not in p.name]
    assert not any(token in text for token in issued for text in [*written, output])
