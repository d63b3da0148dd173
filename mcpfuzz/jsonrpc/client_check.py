"""What a case says about mcpfuzz's side as a client: how it answers the server's requests, how it retries."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

# 2026-07-28 basic/patterns/mrtr, "Supported Requests": the only requests a server may answer `input_required`.
MRTR_METHODS = ("tools/call", "prompts/get", "resources/read")
MISSING_CAPABILITY = -32021  # 2026-07-28: the request needs a client capability it did not declare

class AnswerMode(str, Enum):
    """How mcpfuzz answers a server's elicitation, sampling or roots request (legacy) or `inputRequests` (2026-07-28).

    The first three are answers a conforming client gives; the rest are what a broken or hostile client sends.
    """

    ACCEPT = "accept"  # elicitation accepted with values drawn from its requestedSchema; sampling and roots answered
    DECLINE = "decline"
    CANCEL = "cancel"
    WRONG_TYPES = "wrong-types"
    MISSING_FIELDS = "missing-fields"
    OVERSIZED = "oversized"
    ERROR = "error"  # a JSON-RPC error instead of a result
    SILENCE = "silence"  # no answer at all

    @property
    def valid(self) -> bool:
        """Whether a conforming client could answer so."""
        return self in VALID_MODES


VALID_MODES = (AnswerMode.ACCEPT, AnswerMode.DECLINE, AnswerMode.CANCEL)
FUZZ_MODES = (AnswerMode.WRONG_TYPES, AnswerMode.MISSING_FIELDS, AnswerMode.OVERSIZED, AnswerMode.ERROR,
              AnswerMode.SILENCE)


class RetryKind(str, Enum):
    """A 2026-07-28 retry of a request answered `input_required` (basic/patterns/mrtr)."""

    VALID = "valid"  # inputResponses under the asked keys, requestState echoed exactly
    NO_RESPONSES = "no-responses"
    WRONG_KEYS = "wrong-keys"
    NO_STATE = "no-state"
    TRUNCATED_STATE = "truncated-state"
    FLIPPED_STATE = "flipped-state"  # one character of requestState changed
    EDITED_STATE = "edited-state"  # a value inside a readable (JSON or base64 JSON) requestState changed
    OVERSIZED_STATE = "oversized-state"
    EXTRA_PARAMS = "extra-params"

    @property
    def tampered(self) -> bool:
        """Whether the retry carries a requestState the server did not write (one it MUST NOT trust blindly)."""
        return self in (RetryKind.FLIPPED_STATE, RetryKind.EDITED_STATE)


@dataclass(frozen=True)
class AskingRequest:
    """A request whose server asked for input: what the client phase sends again, answering in every way.

    `family` and `name`: the case's target (`tool`/`greet`, `prompt`/NAME, `resource`/URI, `template`/TEMPLATE);
    `method`: one of MRTR_METHODS; `params`: the request's params without `_meta`, `inputResponses` and
    `requestState` (the client phase sets those per case).
    """

    family: str
    name: str
    method: str
    params: dict = field(hash=False, compare=False)
