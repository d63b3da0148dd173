"""The canary layout of a security run, as plain data: where the planted files are and how their tokens read.

No I/O here: the engine plants the files (`mcpfuzz.engine.security`) and the oracles read the tokens back.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import Enum


class Place(str, Enum):
    """Where a canary file lies relative to the workspace the server was given."""

    WORKSPACE = "workspace"  # inside: the server may read it
    SIBLING = "sibling"  # a folder beside the workspace whose name starts with the workspace's
    PARENT = "parent"  # the folder holding both
    LINKED = "linked"  # a folder beside the workspace that a symlink planted inside the workspace points to


OUTSIDE = (Place.SIBLING, Place.PARENT, Place.LINKED)
TOKEN_HEX = 16
# A token names its place, so a result holding one says where the server read from.
CANARY_TOKEN = re.compile(rf"mcpfuzz-canary-(?P<place>{'|'.join(p.value for p in Place)})-[0-9a-f]{{{TOKEN_HEX}}}")
HIT_PREFIX = "hit-"
# The one file name a payload asks a shell to create; anything else in the canary folder is not a hit.
HIT_FILE = re.compile(rf"{HIT_PREFIX}(?P<token>[0-9a-f]{{{TOKEN_HEX}}})")
_HIT_NAME = re.compile(rf"{HIT_PREFIX}[0-9a-f]{{{TOKEN_HEX}}}")
WORKSPACE_NAME = "workspace"
SIBLING_NAME = "workspace-private"  # shares the workspace's name as a prefix: `startswith` without a separator
WORKSPACE_FILE = "notes.txt"
SIBLING_FILE = "secret.txt"
PARENT_FILE = "outside.txt"
LINKED_NAME = "linked"
LINKED_FILE = "linked.txt"
LINK_NAME = "shared"  # the symlink inside the workspace, to the linked folder: `shared/linked.txt` looks inside


def canary_token(place: Place, nonce: str) -> str:
    """The text planted in the canary file of `place` (`nonce`: the run's own random hex)."""
    return f"mcpfuzz-canary-{place.value}-{_digest(place.value, nonce)}"


def carries_canary(text: str) -> bool:
    """True when `text` holds a canary token or a hit file's name (a path holding one too): a value read back from
    the server that a security run never sends again, since an answer echoing it would prove nothing."""
    return CANARY_TOKEN.search(text) is not None or _HIT_NAME.search(text) is not None


def hit_token(nonce: str, *parts: str) -> str:
    """A hex token unique to one payload of one site, in the name of the file its shell would create."""
    return _digest(nonce, *parts)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:TOKEN_HEX]


@dataclass(frozen=True)
class CanaryLayout:
    """A security run's folders: `root` holds the workspace, its sibling and the parent's canary; `hits` is the
    folder a shell running a payload would create a file in."""

    root: str
    hits: str
    nonce: str
    listener: str = ""  # the run's loopback listener (`http://127.0.0.1:PORT`), where URL payloads point

    @property
    def workspace(self) -> str:
        """The folder the server is given as its working directory and allowed root."""
        return f"{self.root}/{WORKSPACE_NAME}"

    @property
    def sibling(self) -> str:
        """The folder beside the workspace whose name starts with the workspace's."""
        return f"{self.root}/{SIBLING_NAME}"

    @property
    def linked(self) -> str:
        """The folder outside the workspace that the workspace's symlink `LINK_NAME` points to."""
        return f"{self.root}/{LINKED_NAME}"

    def hit_path(self, token: str) -> str:
        """The file a shell running the payload of `token` creates."""
        return f"{self.hits}/{HIT_PREFIX}{token}"
