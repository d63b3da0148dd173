"""`mcpfuzz explain CODE|ORACLE`: what a finding's rule says, where it comes from, and what to do about it."""

from __future__ import annotations

import sys

import click

from mcpfuzz.cli.options import EXIT_CLEAN, EXIT_ERROR


@click.command("explain")
@click.argument("name", metavar="CODE|ORACLE")
def explain(name: str) -> None:
    """Explain a finding code (`MF-ID-001`), an oracle id (`id-preserved`) or a snapshot change code (`MF-SNAP-004`).

    Prints the rule, its source (specification section, MUST or SHOULD), why it matters, how the known SDKs
    behave and where the fix goes, and how to silence it. Exit status: 0 explained, 2 unknown name.
    """
    from mcpfuzz.report.codes import find_rule

    rule = find_rule(name)
    if rule is not None:
        click.echo(oracle_text(rule.oracle))
        sys.exit(EXIT_CLEAN)
    change = _change_kind(name)
    if change is not None:
        click.echo(change)
        sys.exit(EXIT_CLEAN)
    import difflib

    from mcpfuzz.report.codes import RULES

    names = [rule.code for rule in RULES] + [rule.oracle for rule in RULES]
    close = difflib.get_close_matches(name, names, n=2) or difflib.get_close_matches(name.upper(), names, n=2)
    hint = f"; did you mean {' or '.join(close)}?" if close else "; `mcpfuzz oracles` lists every oracle and code"
    click.echo(f"error: no finding code or oracle named {name!r}{hint}", err=True)
    sys.exit(EXIT_ERROR)


def oracle_text(oracle_id: str) -> str:
    """The explanation of one oracle's rule, for people."""
    from mcpfuzz.engine.attribution.known import known_behaviours
    from mcpfuzz.oracles.base import all_oracles
    from mcpfuzz.report.codes import BY_ORACLE

    rule = BY_ORACLE[oracle_id]
    oracle = all_oracles().get(oracle_id)
    title = oracle.title if oracle else oracle_id
    lines = [f"{rule.code}  {oracle_id}: {title}", ""]
    if oracle is not None:
        lines += [f"rule:      {oracle.description}", f"severity:  up to {oracle.severity}"]
    lines += [f"source:    {rule.source} ({rule.level})", f"why:       {rule.why}", "", "fix:"]
    rows = [row for row in known_behaviours() if row.oracle == oracle_id]
    for row in rows:
        versions = ("all versions" if not (row.since or row.before) else
                    f"{'from ' + row.since if row.since else ''}{' ' if row.since and row.before else ''}"
                    f"{'before ' + row.before if row.before else ''}")
        upstream = f"fixed in {row.before}: upgrade" if row.before else "open upstream: follow"
        lines.append(f"  {row.sdk.value} SDK ({versions}, {row.transport}, key {row.key}): {row.behaviour}; "
                     f"{upstream} {row.link}")
    lines.append("  " + ("any other stack, and a finding not marked as the SDK's: the fix is in the server's own "
                         "code (the finding's target names the tool or frame)" if rows else
                         "no SDK is known to ship this: the fix is in the server's own code (the finding's target "
                         "names the tool or frame)"))
    lines += ["", "silence:",
              f"  one run:        --exclude-oracles {oracle_id}  (exclude-oracles = \"{oracle_id}\" in mcpfuzz.toml)",
              "  known findings: mcpfuzz baseline REPORT.json --output mcpfuzz-baseline.json, then "
              "--baseline mcpfuzz-baseline.json (accepted findings still show, never fail)",
              "  more:           docs/oracles.md, docs/sdk-behaviours.md, docs/codes.md"]
    return "\n".join(lines)


def _change_kind(name: str) -> str | None:
    """A snapshot change code explained, or None."""
    from mcpfuzz.engine.snapshot.changes import ChangeKind

    for kind in ChangeKind:
        if name.strip().upper() == kind.code or name.strip().lower() == kind.value:
            return (f"{kind.code}  snapshot change: {kind.value.replace('-', ' ')}\n\n"
                    "A change of the server's declared surface since the snapshot `mcpfuzz snapshot --check FILE` "
                    "compared with; each change is ranked breaking, compatible or cosmetic (docs/snapshot.md).\n"
                    "fix: restore the old surface, or accept it: `mcpfuzz snapshot --check FILE --update` and commit "
                    "the file\nsilence: --fail-on-change compatible|any sets what fails; cosmetic changes never fail "
                    "by default")
    return None
