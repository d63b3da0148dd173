"""What a cut left of a known secret is hidden as one alternation of every piece would hide it, and a long bearer
token makes a pattern the size of the token, not of its square."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcpfuzz.corpus.redact import REDACTED, Redactor
from mcpfuzz.corpus.secret_pieces import SecretPieces

pytestmark = pytest.mark.unit

SHORTEST = 6


def every_piece(secrets: set[str]) -> re.Pattern[str] | None:
    """The reference: every start and end of every secret written out, longest first."""
    pieces = {piece for secret in secrets for size in range(SHORTEST, len(secret))
              for piece in (secret[:size], secret[-size:])}
    ordered = sorted(pieces, key=lambda s: (-len(s), s))
    return re.compile("|".join(map(re.escape, ordered))) if ordered else None


# Two letters and a dot, so that secrets share windows and texts hold overlapping and repeated pieces.
SECRET = st.text(alphabet="ab.", min_size=SHORTEST - 1, max_size=16)
NOISE = st.text(alphabet="ab.-", max_size=6)


@st.composite
def secrets_and_text(draw: st.DrawFn) -> tuple[set[str], str]:
    secrets = draw(st.sets(SECRET, min_size=1, max_size=3))
    bits: list[str] = []
    for _ in range(draw(st.integers(0, 8))):
        secret = draw(st.sampled_from(sorted(secrets)))
        size = draw(st.integers(0, len(secret)))
        bits.append(draw(st.sampled_from([secret[:size], secret[len(secret) - size:], secret, ""])))
        bits.append(draw(NOISE))
    return secrets, "".join(bits)


@settings(max_examples=300)
@given(secrets_and_text())
@example(({"aaaaaaab"}, "aaaaaab."))  # an end longer than the start found at the same place
@example(({"ab.ab.ab", "b.ab.aaaa"}, "-b.ab.ab.aaa"))  # one secret's start inside another's
def test_the_pieces_replaced_are_those_of_one_alternation_of_every_piece(case: tuple[set[str], str]) -> None:
    secrets, text = case
    reference = every_piece(secrets)
    expected = reference.sub(REDACTED, text) if reference is not None else text
    assert SecretPieces(secrets, SHORTEST).sub(REDACTED, text) == expected


def test_a_long_token_cut_anywhere_is_hidden_and_its_pattern_stays_small() -> None:
    token = "eyJ" + "".join(chr(ord("A") + (i * 7919) % 26) + str(i % 10) for i in range(600))
    pieces = SecretPieces({token}, SHORTEST)
    # Windows of six characters, common starts written once: about the token's length, not its square.
    assert pieces._windows is not None and len(pieces._windows.pattern) < 20 * len(token)
    redactor = Redactor([token])
    for cut in (token[:SHORTEST], token[:700], token[-SHORTEST:], token[-900:], token[:-1], token[1:]):
        assert redactor.text(f"said: {cut} (cut)") == f"said: {REDACTED} (cut)", len(cut)
    assert redactor.text(f"a {token[3:40]} b") == f"a {token[3:40]} b"  # the middle of a token is no piece
    assert redactor.text(f"x{token}y") == f"x{REDACTED}y"
