"""Workers borrow their tokens from the parent (transport/auth/lending.py), over real pipes, from a real token command.

Two workers' keepers (each as a worker process keeps one) ask one lender: the command runs once per renewal for both,
not once per worker; a worker whose pipe to the parent broke gets its own tokens and says so once.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from mcpfuzz.transport.auth.command import CommandSource
from mcpfuzz.transport.auth.keeper import TokenKeeper
from mcpfuzz.transport.auth.lending import BorrowedSource, ParentChannel, TokenLender
from mcpfuzz.transport.auth.settings import AuthSettings

pytestmark = pytest.mark.process


def counting_command(tmp_path: Path, expires_in: int | None = None) -> tuple[AuthSettings, Path]:
    """A token command that prints `token-N` (N: how many times it ran, counted in a file) as a token response."""
    runs = tmp_path / "runs"
    runs.write_text("")
    script = tmp_path / "get_token.py"
    lifetime = f", 'expires_in': {expires_in}" if expires_in is not None else ""
    script.write_text("import json\n"
                      f"with open({str(runs)!r}, 'a') as log: log.write('x')\n"
                      f"count = len(open({str(runs)!r}).read())\n"
                      f"print(json.dumps({{'access_token': 'token-%d' % count{lifetime}}}))\n")
    return AuthSettings(token_command=f"{sys.executable} {script}"), runs


def worker_keeper(lender: TokenLender, settings: AuthSettings, url: str, notices: list[str]) -> TokenKeeper:
    """A keeper as a worker process makes it: its source borrows over its own pipe from the lender."""
    return TokenKeeper(BorrowedSource(ParentChannel(lender.channel(), notices.append), settings, url))


def test_two_workers_renew_once_per_refusal(tmp_path: Path) -> None:
    """Tokens without a lifetime are renewed only after a 401: both workers report the same refused token, and the
    command runs once for it (two keepers of their own would run it twice each)."""
    settings, runs = counting_command(tmp_path)
    url = f"http://127.0.0.1:1/{tmp_path.name}"
    lender = TokenLender()
    notices: list[str] = []
    first, second = worker_keeper(lender, settings, url, notices), worker_keeper(lender, settings, url, notices)
    lender.start()
    try:
        async def scenario() -> list[str]:
            seen = [await first.current(), await second.current()]
            seen.append(await first.rejected(seen[0]))
            seen.append(await second.rejected(seen[1]))  # the parent already replaced it: no second run
            seen.append(await second.current())
            return seen

        seen = anyio.run(scenario)
    finally:
        lender.close()
    assert seen == ["token-1", "token-1", "token-2", "token-2", "token-2"]
    assert len(runs.read_text()) == 2
    assert notices == []
    assert first.renewals == second.renewals == 1
    assert first.retired[-1].value == "token-1"  # the auth probes' expired token is still at hand


def test_a_borrowed_token_keeps_its_lifetime(tmp_path: Path) -> None:
    """The parent's token comes with the seconds it has left: a worker renews it when due, not on every request."""
    settings, runs = counting_command(tmp_path, expires_in=3600)
    lender = TokenLender()
    keeper = worker_keeper(lender, settings, f"http://127.0.0.1:1/{tmp_path.name}", [])
    lender.start()
    try:
        async def three() -> list[str]:
            return [await keeper.current() for _ in range(3)]

        assert anyio.run(three) == ["token-1"] * 3
    finally:
        lender.close()
    assert keeper.token is not None and keeper.token.lifetime == 3600 and not keeper.token.due()
    assert len(runs.read_text()) == 1


def test_a_broken_pipe_falls_back_to_the_workers_own_tokens_with_one_notice(tmp_path: Path) -> None:
    settings, runs = counting_command(tmp_path)
    lender = TokenLender()
    notices: list[str] = []
    keeper = worker_keeper(lender, settings, f"http://127.0.0.1:1/{tmp_path.name}", notices)
    lender.start()

    async def scenario() -> list[str]:
        seen = [await keeper.current()]
        lender.close()  # the parent's end of every pipe closes
        seen.append(await keeper.rejected(seen[0]))
        seen.append(await keeper.rejected(seen[1]))
        return seen

    seen = anyio.run(scenario)
    # The worker ran the command itself after the break (the counter goes on in the one file).
    assert seen == ["token-1", "token-2", "token-3"]
    assert len(runs.read_text()) == 3
    assert len(notices) == 1 and "gets its own" in notices[0], notices
    assert not any(token in notices[0] for token in seen)


def test_a_failing_command_in_the_parent_is_the_workers_auth_error(tmp_path: Path) -> None:
    """The parent's AuthError (exit status, stderr) reaches the worker as its own: the run stops saying why."""
    from mcpfuzz.transport.auth.errors import AuthError

    settings = AuthSettings(token_command=f"{sys.executable} -c \"import sys; sys.stderr.write('vault sealed'); "
                                          "sys.exit(3)\"")
    lender = TokenLender()
    notices: list[str] = []
    keeper = worker_keeper(lender, settings, f"http://127.0.0.1:1/{tmp_path.name}", notices)
    lender.start()
    try:
        with pytest.raises(AuthError, match="exit status 3.*vault sealed"):
            anyio.run(keeper.current)
    finally:
        lender.close()
    assert notices == []


def test_a_borrowing_keeper_names_its_own_source_as_origin(tmp_path: Path) -> None:
    """The auth probes ask the keeper's origin for other audiences' tokens: a worker's own source, not the pipe."""
    settings, _ = counting_command(tmp_path)
    lender = TokenLender()
    keeper = worker_keeper(lender, settings, "http://127.0.0.1:1/x", [])
    lender.close()
    assert isinstance(keeper.origin, CommandSource)
