"""Secret redaction for everything the corpus writes: known secrets first, then token shapes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mcpfuzz.corpus.secret_pieces import SecretPieces
from mcpfuzz.jsonrpc import issued_secrets

REDACTED = "<redacted>"
# Shorter values would blank out ordinary words ("a", "dev", "1") wherever they occur.
MIN_SECRET_LENGTH = 4
# A text cut somewhere (a message, a line, a tail) may hold a known secret's start or end without the rest: from
# this many characters on, such a piece is hidden too (shorter ones are too common to tell from ordinary words).
MIN_SECRET_PIECE = 6

# A word that makes a name hold a credential. "tokens" counts things (maxTokens, total_tokens), and
# "author"/"authority" are not auth, while "authorization"/"authorise" are.
_SECRET_WORD = re.compile(r"token(?!s)|secret|passw(?:or)?d|api[_-]?key|auth(?!or(?!i[sz]))", re.IGNORECASE)
# Names that contain such a word but hold identifiers, not credentials (lower case, without - _ .);
# redacting progressToken would also make replays differ from what was sent.
_NOT_SECRET_NAMES = frozenset({
    "progresstoken", "nexttoken", "pagetoken", "nextpagetoken", "tokentype", "tokencount", "tokenizer",
})

# Well-known credential shapes. The look-behind stands in for \b, which treats "_" as a word character
# and would miss "MY_sk_live_..." while still refusing "task-...".
_START = r"(?<![A-Za-z0-9])"
_TOKEN_SHAPES = tuple(re.compile(_START + shape) for shape in (
    r"(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{8,}",   # Stripe-style keys
    r"sk-[A-Za-z0-9_-]{16,}",                       # sk-..., sk-proj-..., sk-ant-...
    r"gh[pousr]_[A-Za-z0-9]{20,}",                  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{20,}",                # GitHub fine-grained tokens
    r"xox[abprs]-[A-Za-z0-9-]{10,}",                # Slack
    r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])",       # AWS access key ids
    r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",  # JWTs (the signature may be empty)
))
_URL_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^\s/@:]+:[^\s/@]*@")
_AUTH_SCHEME = re.compile(r"\b((?i:bearer|basic)\s+)([A-Za-z0-9._~+/-]+=*)")

_NAME = r"[A-Za-z0-9_.-]+"
_NAME_START = r"(?<![A-Za-z0-9_.-])"
# "name": "value" (JSON), 'name': 'value' (Python reprs) and \"name\": \"value\" (JSON inside a JSON string).
_QUOTED_PAIRS = (
    re.compile(r'("([^"\s]{1,80})"\s*[:=]\s*")((?:\\.|[^"\\])*)(")'),
    re.compile(r"('([^'\s]{1,80})'\s*[:=]\s*')((?:\\.|[^'\\])*)(')"),
    re.compile(r'(\\"([^"\\\s]{1,80})\\"\s*[:=]\s*\\")((?:(?!\\").)*)(\\")'),
)
# An optional scheme word before a pair's value: "Authorization: Basic abc" hides "abc", not "Basic".
_SCHEME = r"((?i:bearer|basic)\s+)?"
# name=value (query strings, env assignments, --flag=value): any value, quoted or up to a separator.
_ASSIGNMENT = re.compile(
    _NAME_START + r"(" + _NAME + r")(\s*=\s*)" + _SCHEME + r"(\"[^\"]*\"|'[^']*'|[^\s&;,\"'<>=][^\s&;,\"'<>]*)")
# name: value (headers, YAML, log lines): prose uses colons too, so only a credential-looking value
# (or whatever follows a scheme word).
_COLON_PAIR = re.compile(_NAME_START + r"(" + _NAME + r")(:[ \t]*)" + _SCHEME + r"([^\s&;,\"'<>][^\s&;,\"'<>]*)")


def is_secret_name(name: str) -> bool:
    """True when a key, variable or flag name looks like it holds a credential."""
    folded = re.sub(r"[-_.]", "", name.lower())
    return folded not in _NOT_SECRET_NAMES and _SECRET_WORD.search(name) is not None


# Words that make a setting's name (an environment variable, a ${VAR}) hold a credential beyond a key's or a header's:
# KEY as a word of its own (OPENAI_KEY, PRIVATE_KEY; not KEYBOARD), PASS (DB_PASS), credentials, cookies.
_SECRET_SETTING_WORD = re.compile(r"(?:^|[_.-])(?:keys?|pass)(?:$|[_.-])|credential|cookie|private", re.IGNORECASE)
# A file-system path: absolute, home- or dot-relative, or a Windows drive's; no whitespace (a list of them, PATH
# style, is split on ":" or ";" first).
_PATH = re.compile(r"(?:~|\.{1,2})?/[^\s]*|[A-Za-z]:[\\/][^\s]*|(?:~|\.{1,2})")
_PATH_LIST = re.compile(r"[:;](?![\\/])")
# A run of letters and digits long enough to be a key, a hash or base64 rather than words.
_RANDOM_RUN = re.compile(r"[A-Za-z0-9+]{16,}")


def looks_like_path(value: str) -> bool:
    """True for a file-system path (or a PATH-style list of them): `/srv/data`, `~/notes`, `./db`, `C:\\data`."""
    parts = [part for part in _PATH_LIST.split(value) if part]
    return bool(parts) and all(_PATH.fullmatch(part) for part in parts)


def looks_random(value: str) -> bool:
    """True for a value holding a long run of mixed letters and digits (an API key, a hash, base64), or a known
    credential shape; false for words, numbers, versions, URLs without a password, and paths."""
    if any(shape.search(value) for shape in _TOKEN_SHAPES) or _URL_USERINFO.search(value):
        return True
    return any(_mixed(run) for run in _RANDOM_RUN.findall(value))


def _mixed(run: str) -> bool:
    """Letters and digits both."""
    return any(c.isdigit() for c in run) and any(c.isalpha() for c in run)


def is_secret_setting(name: str, value: str) -> bool:
    """Whether a named setting's value (an `--env` variable, a `${VAR}` a config file expanded) is a secret to hide
    wherever it appears: a credential-looking name, or a value that looks random, under any name. A path is not:
    hiding it would cut that folder out of the server's command and every file name under it, and the file it
    names (a credentials file) is not in the text; under a credential-looking name, only a path that exists is."""
    if is_secret_name(name) or _SECRET_SETTING_WORD.search(name):
        return not (looks_like_path(value) and Path(value).expanduser().exists())
    return not looks_like_path(value) and looks_random(value)


def looks_like_credential(word: str, min_length: int = 8) -> bool:
    """True for a word with digits, symbols or inner capitals: "hunter2" or "dXNlcjpwYXNz", not "expired"."""
    if len(word) < min_length:
        return False
    return any(c.isdigit() or c in "+/=_-.~" for c in word) or any(c.isupper() for c in word[1:])


def _secret_variants(secret: str) -> set[str]:
    """A secret as written plus its JSON-escaped and URL-encoded spellings."""
    return {secret, json.dumps(secret, ensure_ascii=False)[1:-1], quote(secret, safe="")}


def _alternation(values: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern matching any of `values`, longest first (a value that contains another is replaced whole)."""
    ordered = sorted(set(values), key=lambda s: (-len(s), s))
    return re.compile("|".join(map(re.escape, ordered))) if ordered else None


class Redactor:
    """Replaces known secrets and anything shaped like a credential with `<redacted>`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._given = tuple(secrets)
        self._issued = -1
        self._compile()

    def _compile(self) -> None:
        """The patterns of the given secrets and of those the run obtained since (`issued_secrets`: tokens)."""
        self._issued = issued_secrets.count()
        every = (*self._given, *issued_secrets.issued())
        known = {v for s in every if len(s) >= MIN_SECRET_LENGTH for v in _secret_variants(s)}
        self._known = _alternation(known)
        self._pieces = SecretPieces(known, MIN_SECRET_PIECE)  # what a cut may leave of a secret

    def known(self, s: str) -> str:
        """`s` with only the known secrets replaced (for frames, which must replay byte for byte)."""
        if self._issued != issued_secrets.count():
            self._compile()
        return self._known.sub(REDACTED, s) if self._known is not None else s

    def text(self, s: str) -> str:
        """`s` with every known secret (and any start or end of one a cut left) and credential-shaped substring
        replaced."""
        if self._issued != issued_secrets.count():
            self._compile()
        if self._known is not None:
            s = self._known.sub(REDACTED, s)
        s = self._pieces.sub(REDACTED, s)
        s = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", s)
        for shape in _TOKEN_SHAPES:
            s = shape.sub(REDACTED, s)
        s = _AUTH_SCHEME.sub(_redact_if(2, lambda m: looks_like_credential(m.group(2))), s)
        for pattern in _QUOTED_PAIRS:
            s = pattern.sub(_redact_quoted, s)
        s = _ASSIGNMENT.sub(_redact_assignment, s)
        return _COLON_PAIR.sub(_redact_if(4, lambda m: is_secret_name(m.group(1)) and (
            m.group(3) is not None or looks_like_credential(m.group(4), 4))), s)

    def value(self, obj: Any) -> Any:
        """A JSON-like value with its strings redacted; values under secret-looking keys replaced whole."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {key: self._field(key, item) for key, item in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [self.value(item) for item in obj]
        return obj

    def argv(self, args: Iterable[str]) -> list[str]:
        """A command line with secrets redacted; the argument after `--token`-like flags is hidden whole."""
        redacted: list[str] = []
        hide_next = False
        for arg in args:
            # A following long flag means the secret-looking flag was a switch (--no-auth), not a holder.
            redacted.append(REDACTED if hide_next and not arg.startswith("--") else self.text(arg))
            hide_next = arg.startswith("-") and "=" not in arg and is_secret_name(arg.lstrip("-"))
        return redacted

    def _field(self, key: Any, item: Any) -> Any:
        """One dict value: hidden whole under a secret-looking key unless it carries nothing."""
        if isinstance(key, str) and is_secret_name(key) and item not in (None, "", True, False):
            return REDACTED
        return self.value(item)


def _redact_if(group: int, test: Callable[[re.Match[str]], bool]) -> Callable[[re.Match[str]], str]:
    """A substitution that replaces `group` of a match with `<redacted>` when `test` holds."""
    def substitute(match: re.Match[str]) -> str:
        if not test(match):
            return match.group(0)
        start, end = match.start(group) - match.start(), match.end(group) - match.start()
        whole = match.group(0)
        return whole[:start] + REDACTED + whole[end:]
    return substitute


def _redact_quoted(match: re.Match[str]) -> str:
    """A quoted name/value pair with its value hidden when the name is secret-looking."""
    prefix, name, value, closing = match.group(1, 2, 3, 4)
    if not value or not is_secret_name(name):
        return match.group(0)
    return f"{prefix}{REDACTED}{closing}"


def _redact_assignment(match: re.Match[str]) -> str:
    """A name=value pair with its value hidden (keeping its quotes) when the name is secret-looking."""
    name, separator, scheme, value = match.group(1, 2, 3, 4)
    if not is_secret_name(name):
        return match.group(0)
    quote_char = value[0] if value[0] in "\"'" else ""
    return f"{name}{separator}{scheme or ''}{quote_char}{REDACTED}{quote_char}"
