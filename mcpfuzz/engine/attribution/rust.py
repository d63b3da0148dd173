"""A Rust server's `rmcp` and its version, read from the source paths cargo leaves in the binary's strings.

A crate built from the registry is compiled from `.../registry/src/<index>/rmcp-X.Y.Z/src/...`, and its panic
locations keep that path in the binary's read-only data even in a release build.
"""

from __future__ import annotations

import re
from pathlib import Path

from mcpfuzz.engine.attribution.binfile import section_or_head
from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

_RMCP_SOURCE = re.compile(rb"[/\\]rmcp-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)[/\\]src[/\\]")


def rust_sdk(binary: Path) -> SdkInfo | None:
    """rmcp's version in a Rust binary (the newest one named, should two be linked), or None."""
    data = section_or_head(binary, ".rodata")
    versions = {match.group(1).decode() for match in _RMCP_SOURCE.finditer(data)}
    if not versions:
        return None
    return SdkInfo(Sdk.RUST, max(versions, key=_release), str(binary))


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("-")[0].split("."))
