"""The oracle ids exist once (`OracleId`), each registered once with its metadata, which every consumer reads."""

from __future__ import annotations

import re

import pytest

from mcpfuzz.jsonrpc.expectation import Expectation
from mcpfuzz.jsonrpc.oracle_ids import OracleId
from mcpfuzz.oracles.base import REGISTRY, Failure, Oracle, Scope, Severity, all_oracles, failure_class, register
from mcpfuzz.report.sarif import LEVELS, sarif_rule
from tests.conftest import ORACLE_IDS, REPO_ROOT

pytestmark = pytest.mark.unit

# A row of docs/oracles.md's table: | `id` | fires when | severity words |
README_ROW = re.compile(r"^\| `([a-z-]+)` \| .* \| ([^|]+) \|$")
SEVERITY_WORD = re.compile(r"\b(low|medium|high|critical)\b")


def readme_oracles() -> dict[str, Severity]:
    """The oracle table of docs/oracles.md: each id with the worst severity its row names."""
    text = (REPO_ROOT / "docs" / "oracles.md").read_text(encoding="utf-8")
    table = text.split("# Oracles", 1)[1].split("\n\n", 2)[1]
    rows = {}
    for line in table.splitlines()[2:]:
        match = README_ROW.match(line)
        assert match, f"not an oracle row: {line[:80]}"
        words = SEVERITY_WORD.findall(match.group(2))
        rows[match.group(1)] = max(Severity.parse(word) for word in words)
    return rows


def test_every_id_is_registered_once_in_id_order() -> None:
    """The registry holds exactly the OracleId members, listed in their order, each with its metadata."""
    oracles = all_oracles()
    assert list(oracles) == [oracle_id.value for oracle_id in OracleId] == list(ORACLE_IDS)
    for oracle_id, oracle in oracles.items():
        assert oracle.id == oracle.failure.oracle == oracle_id
        assert oracle.title and oracle.description and "\n" not in oracle.description
        assert (oracle.check is not None) == bool(oracle.scope & Scope.EXCHANGE), oracle_id


def test_run_level_oracles_have_their_own_kind() -> None:
    """memory-growth, lint, the auth oracles and session-isolation judge only the run; session-leak judges exchanges
    and, as a pile-up, the run."""
    oracles = all_oracles()
    assert {i for i, o in oracles.items() if o.scope & Scope.RUN} == {
        "memory-growth", "session-leak", "lint", "auth-required", "auth-challenge", "session-isolation"}
    assert all(oracles[i].scope == Scope.RUN and oracles[i].check is None
               for i in ("auth-required", "auth-challenge", "session-isolation"))
    assert oracles["lint"].scope == Scope.RUN and oracles["lint"].check is None
    assert oracles["memory-growth"].scope == Scope.RUN and oracles["memory-growth"].check is None
    assert oracles["session-leak"].scope == Scope.EXCHANGE | Scope.RUN


def test_registering_an_unknown_or_repeated_id_fails_at_once() -> None:
    """A typo in an oracle id, or a second registration, fails on import, not during a run."""
    stray = type("StrayFailure", (Failure,), {"oracle": "no-such-oracle", "title": "stray"})
    with pytest.raises(ValueError):
        register(stray, Severity.LOW)(lambda exchange: iter(()))
    with pytest.raises(ValueError, match="twice"):
        register(failure_class(OracleId.NO_CRASH, "again"), Severity.LOW)(_documented)
    assert "no-such-oracle" not in REGISTRY and REGISTRY["no-crash"].title == "Server process died"


def _documented(exchange: object) -> list[Failure]:
    """A check with a description."""
    return []


def test_a_judge_that_is_no_oracle_id_fails_when_the_case_is_built() -> None:
    """Expectation checks its judge at construction: a typo fails the strategy's test, not a run."""
    assert Expectation(judge="method-not-found").judge is OracleId.METHOD_NOT_FOUND  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Expectation(judge="method-not-fonud")  # type: ignore[arg-type]


def test_readme_table_lists_every_oracle_with_its_severity() -> None:
    """docs/oracles.md's table has one row per registered oracle, and its worst severity is the registered one."""
    rows = readme_oracles()
    assert sorted(rows) == sorted(all_oracles())
    assert rows == {oracle_id: oracle.severity for oracle_id, oracle in all_oracles().items()}


@pytest.mark.parametrize("oracle", list(all_oracles().values()), ids=lambda o: o.id)
def test_sarif_rule_reads_the_registration(oracle: Oracle) -> None:
    """A SARIF rule's title, description and default level come from the registration."""
    rule = sarif_rule(oracle.id)
    assert rule["shortDescription"]["text"] == oracle.title
    assert rule["fullDescription"]["text"] == oracle.description
    assert rule["defaultConfiguration"]["level"] == LEVELS[oracle.severity]


def test_oracle_ids_print_as_themselves() -> None:
    """In messages, file names and JSON an id is its string: reports and corpus names do not change."""
    import json

    assert f"{OracleId.NO_HANG}_x" == "no-hang_x" and str(OracleId.NO_HANG) == "no-hang"
    assert json.dumps({OracleId.NO_HANG: OracleId.NO_CRASH}) == '{"no-hang": "no-crash"}'
    assert {"no-hang": 1}[OracleId.NO_HANG] == 1
