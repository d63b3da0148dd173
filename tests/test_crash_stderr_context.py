"""A crash keeps more of stderr than the tail it shows: a program that prints its error and then a long usage text
(a CLI framework's way when the serve function returns an error) still tells whose words ended it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mcpfuzz.engine.attribution.known import explain
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo
from tests.engine_runs import fixture_command, run_engine

pytestmark = pytest.mark.process


def test_an_error_above_a_long_usage_text_is_kept_for_attribution_not_shown() -> None:
    finished = run_engine(fixture_command("crash-parse-usage"))
    crashes = [finding for finding in finished.findings if finding.oracle == "no-crash"]
    assert crashes, [finding.oracle for finding in finished.findings]
    crash = crashes[0]
    assert "Error: invalid character" not in crash.stderr_tail  # 20 lines shown: the flags only
    assert "Error: invalid character" not in crash.message
    assert "Error: invalid character" in crash.stderr_context
    # Read as a server on the Go SDK: the decoder's words above the usage text are the SDK's (its row matches).
    known = explain(SdkInfo(Sdk.GO, "v1.8.0", "server"), "stdio", crash)
    assert known is not None and known.id == "go-stdio-exits-on-undecodable"
    # Without that context the same crash is nobody's known behaviour.
    assert explain(SdkInfo(Sdk.GO, "v1.8.0", "server"), "stdio", replace(crash, stderr_context="")) is None
