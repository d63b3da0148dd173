"""The stable oracle ids: the names reports, corpus file names and `--oracles` use for each check.

They live in the frame model because an `Expectation` names the oracle that judges it; the registry
(`mcpfuzz.oracles.base`) checks that every id here is registered exactly once.
"""

from __future__ import annotations

from enum import Enum


class OracleId(str, Enum):
    """One oracle's id; the order is the registry's (`mcpfuzz oracles`, SARIF rules, the default selection)."""

    PARSE_ERROR = "parse-error"
    INVALID_REQUEST = "invalid-request"
    METHOD_NOT_FOUND = "method-not-found"
    INVALID_PARAMS = "invalid-params"
    HTTP_STATUS = "http-status"
    SESSION_LEAK = "session-leak"
    ORIGIN_CHECK = "origin-check"
    ID_PRESERVED = "id-preserved"
    SINGLE_RESPONSE = "single-response"
    NO_INTERNAL_LEAK = "no-internal-leak"
    MEMORY_GROWTH = "memory-growth"
    NOTIFICATION_SILENT = "notification-silent"
    NO_CRASH = "no-crash"
    NO_HANG = "no-hang"
    STDOUT_CLEAN = "stdout-clean"
    RESPONSE_SCHEMA = "response-schema"
    VALID_INPUT_ACCEPTED = "valid-input-accepted"
    OUTPUT_SCHEMA = "output-schema"
    VERSION_NEGOTIATION = "version-negotiation"
    RESOURCE_NOT_FOUND = "resource-not-found"
    DECLARED_SERVED = "declared-served"
    CANCEL_RESPECTED = "cancel-respected"
    CONCURRENCY = "concurrency"
    LINT = "lint"
    SANDBOX_ESCAPE = "sandbox-escape"
    COMMAND_INJECTION = "command-injection"
    CLIENT_REQUESTS = "client-requests"
    INPUT_REQUIRED = "input-required"
    MISSING_CAPABILITY = "missing-capability"
    SLOW_INPUT = "slow-input"
    READ_ONLY_TRUTHFUL = "read-only-truthful"
    IDEMPOTENT_RETRY = "idempotent-retry"
    USE_AFTER_DELETE = "use-after-delete"
    TASK_IDS = "task-ids"
    LIST_IDENTITY = "list-identity"
    NETWORK_EGRESS = "network-egress"
    AUTH_REQUIRED = "auth-required"
    AUTH_CHALLENGE = "auth-challenge"
    SESSION_ISOLATION = "session-isolation"

    def __str__(self) -> str:
        # The id itself in messages, f-strings and file names, on every Python version.
        return self.value
