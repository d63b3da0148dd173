"""`lint`: a static problem in what the server declares, found by the rules of `mcpfuzz lint` (mcpfuzz.lint)."""

from __future__ import annotations

from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import Severity, failure_class, register_run_check

LintFailure = failure_class(OracleId.LINT, "lint problem")

# Judged once per run on what the server declares (the lint phase), never on one exchange. A lint error is
# medium (a MUST broken in a declaration), a warning low; info-level advice is left to `mcpfuzz lint`.
register_run_check(LintFailure, Severity.MEDIUM, "A static problem in what the server declares (handshake result, "
                   "capabilities, tools, resources, prompts, schemas); each finding names its rule and location.")
