"""Replay's word on a server that needed variables: the transcript keeps their names (never values), so a failed
replay says which ones this shell lacks instead of leaving the server's own error to guess from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any


def missing_env(server: Any, environ: Mapping[str, str], given: Mapping[str, str]) -> list[str]:
    """The variables the transcript's server was run with that neither the environment nor --env sets now."""
    names = getattr(server, "env_names", ()) or ()
    return [name for name in names if name not in environ and name not in given]


def with_env_tip(outcome: Any, missing: list[str]) -> Any:
    """An ERROR outcome with a tip naming the missing variables; any other outcome as it is."""
    if not missing or outcome.status != "ERROR":
        return outcome
    names = ", ".join(missing)
    pairs = " ".join(f"--env {name}=VALUE" for name in missing)
    return replace(outcome, reason=f"{outcome.reason}\ntip: the run that saved this transcript gave the server "
                                   f"{names} (a transcript keeps names, never values), and this shell has none: "
                                   f"export {'them' if len(missing) > 1 else 'it'}, or add {pairs}")
