"""`--shared URL` and its companions: where the shared store is, under which prefix, for how long."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from mcpfuzz.corpus.redact import REDACTED

SCHEMES = ("redis", "rediss", "unix")
DEFAULT_PREFIX = "mcpfuzz"
DEFAULT_TTL = 7 * 86400.0  # a week: a nightly matrix finds yesterday's examples and findings still there
HEARTBEAT_EVERY = 5.0  # seconds between two heartbeats of one process
HEARTBEAT_TTL = 20.0  # a machine silent this long is gone from `mcpfuzz status` (four intervals)


class SharedUrlError(ValueError):
    """A --shared URL that cannot name a Redis server (the message never holds its password)."""


@dataclass(frozen=True)
class SharedOptions:
    """Where the shared store lives and how its keys are named and kept."""

    url: str
    prefix: str = DEFAULT_PREFIX
    ttl: float = DEFAULT_TTL
    optional: bool = False  # unreachable at the start: soak locally (and join when it comes) instead of exit 2
    heartbeat_every: float = HEARTBEAT_EVERY
    heartbeat_ttl: float = HEARTBEAT_TTL

    @property
    def password(self) -> str | None:
        """The password in the URL (`redis://:PASSWORD@host`), if any."""
        return urlsplit(self.url).password

    @property
    def secrets(self) -> list[str]:
        """Values never printed or written: the URL's password (the user name is hidden in `label` only: redacting
        a name like "admin" from every text would blank out ordinary words)."""
        password = urlsplit(self.url).password
        return [password] if password else []

    @property
    def label(self) -> str:
        """The URL as it may be shown: user info replaced with `<redacted>`."""
        return redacted_url(self.url)


def redacted_url(url: str) -> str:
    """`url` with any user name and password replaced by `<redacted>`."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, f"{REDACTED}@{host}", parts.path, parts.query, parts.fragment))


def check_url(url: str) -> None:
    """Refuse a URL that is not redis://, rediss:// or unix://, or lacks a host or has a bad database number."""
    shown = redacted_url(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise SharedUrlError(f"{shown} is not a URL ({error})") from None
    if parts.scheme not in SCHEMES:
        raise SharedUrlError(f"{shown} is not a Redis URL: it must start with redis://, rediss:// (TLS) or unix://")
    if parts.scheme != "unix" and not parts.hostname:
        raise SharedUrlError(f"{shown} names no host; e.g. redis://127.0.0.1:6379/0")
    if port == 0:
        raise SharedUrlError(f"{shown} has port 0")
    database = parts.path.strip("/")
    if parts.scheme != "unix" and database and not database.isdigit():
        raise SharedUrlError(f"{shown}: the path must be a database number (e.g. /0), not {database!r}")


def check_prefix(prefix: str) -> None:
    """A key prefix: non-empty, printable, without spaces or the `*?[` of key patterns (status lists by pattern)."""
    if not prefix or any(c.isspace() or c in "*?[]" or not c.isprintable() for c in prefix):
        raise SharedUrlError(f"{prefix!r} cannot be a key prefix; use letters, digits and - _ : . (e.g. myproject)")
