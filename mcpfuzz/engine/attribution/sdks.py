"""The MCP SDKs mcpfuzz knows, and what detection tells about the one a server is built on."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Sdk(str, Enum):
    """An MCP SDK mcpfuzz knows the behaviours of (the values are what the known-behaviour table names)."""

    PYTHON = "python"  # the `mcp` package on PyPI
    TYPESCRIPT = "typescript"  # `@modelcontextprotocol/sdk` on npm
    FASTMCP = "fastmcp"  # the standalone `fastmcp` package on PyPI (not mcp's bundled copy), built on `mcp`
    GO = "go"  # the Go module github.com/modelcontextprotocol/go-sdk
    MCP_GO = "mcp-go"  # the Go module github.com/mark3labs/mcp-go (community, widely used)
    CSHARP = "csharp"  # the NuGet packages ModelContextProtocol / ModelContextProtocol.Core
    JAVA = "java"  # the Maven group io.modelcontextprotocol.sdk (mcp, mcp-core)
    KOTLIN = "kotlin"  # the Maven group io.modelcontextprotocol (kotlin-sdk)
    RUST = "rust"  # the crate rmcp

    @property
    def display_name(self) -> str:
        """The SDK's name for people."""
        return _DISPLAY_NAMES[self]


_DISPLAY_NAMES = {
    Sdk.PYTHON: "the Python SDK (mcp)",
    Sdk.TYPESCRIPT: "the TypeScript SDK",
    Sdk.FASTMCP: "FastMCP",
    Sdk.GO: "the Go SDK",
    Sdk.MCP_GO: "mcp-go",
    Sdk.CSHARP: "the C# SDK (ModelContextProtocol)",
    Sdk.JAVA: "the Java SDK",
    Sdk.KOTLIN: "the Kotlin SDK",
    Sdk.RUST: "the Rust SDK (rmcp)",
}


@dataclass(frozen=True)
class SdkInfo:
    """The SDK a server is built on, its version, the file that told, and the SDK it is built on in turn."""

    sdk: Sdk
    version: str
    source: str
    base: SdkInfo | None = None  # FastMCP's `mcp`: its transports and their known behaviours come along

    def describe(self) -> str:
        """`the TypeScript SDK 1.32.2`; `FastMCP 4.2.3 (on the Python SDK (mcp) 2.3.0)`."""
        own = f"{self.sdk.display_name} {self.version}"
        return own if self.base is None else f"{own} (on {self.base.describe()})"

    def layers(self) -> tuple[SdkInfo, ...]:
        """This SDK, then the ones under it (a known behaviour of any of them shows in the server)."""
        return (self, *(self.base.layers() if self.base is not None else ()))
