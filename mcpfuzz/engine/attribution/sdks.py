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
    FASTMCP_TS = "fastmcp-ts"  # `fastmcp` on npm (punkpeye's), built on the TypeScript SDK
    TMCP = "tmcp"  # `tmcp` on npm, its own implementation (no SDK under it)
    MCP_FRAMEWORK = "mcp-framework"  # `mcp-framework` on npm, built on the TypeScript SDK
    MASTRA = "mastra"  # `@mastra/mcp` on npm, built on the TypeScript SDK

    @property
    def display_name(self) -> str:
        """The SDK's name for people."""
        return _DISPLAY_NAMES[self]

    @property
    def stack_name(self) -> str:
        """The short name a report's `stack` gives (`TypeScript SDK`, `Python SDK`, `tmcp`)."""
        return _STACK_NAMES.get(self, _DISPLAY_NAMES[self])


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
    Sdk.FASTMCP_TS: "FastMCP (TypeScript)",
    Sdk.TMCP: "tmcp",
    Sdk.MCP_FRAMEWORK: "mcp-framework",
    Sdk.MASTRA: "@mastra/mcp",
}

_STACK_NAMES = {
    Sdk.PYTHON: "Python SDK",
    Sdk.TYPESCRIPT: "TypeScript SDK",
    Sdk.GO: "Go SDK",
    Sdk.CSHARP: "C# SDK",
    Sdk.JAVA: "Java SDK",
    Sdk.KOTLIN: "Kotlin SDK",
    Sdk.RUST: "Rust SDK (rmcp)",
}


@dataclass(frozen=True)
class SdkInfo:
    """The SDK a server is built on, its version, the file that told, and the SDK it is built on in turn."""

    sdk: Sdk
    version: str
    source: str
    base: SdkInfo | None = None  # FastMCP's `mcp`: its transports and their known behaviours come along
    runtime: str = ""  # the running process that showed it (empty: read from the command's files only)
    # Optional packages of the SDK the server's code was seen to load (`@modelcontextprotocol/express`): a behaviour
    # of such a package is the SDK's only where the server runs it.
    packages: frozenset[str] = frozenset()

    def describe(self) -> str:
        """`the TypeScript SDK 1.32.2`; `FastMCP 4.2.3 (on the Python SDK (mcp) 2.3.0)`."""
        own = f"{self.sdk.display_name} {self.version}"
        return own if self.base is None else f"{own} (on {self.base.describe()})"

    def name(self) -> str:
        """`Python SDK 1.30.0`: the stack's short name and version, as the run header says it."""
        return f"{self.sdk.stack_name} {self.version}"

    def to_json(self) -> dict:
        """The JSON report's `stack`: name, version, the evidence it was read from, and what it is built on."""
        return {"name": self.sdk.stack_name, "version": self.version, "evidence": self.evidence(),
                "built_on": None if self.base is None else self.base.to_json()}

    def evidence(self) -> str:
        """What told: the file, and the running process that loads it when one was seen."""
        return self.source if not self.runtime else f"{self.source} ({self.runtime})"

    def layers(self) -> tuple[SdkInfo, ...]:
        """This SDK, then the ones under it (a known behaviour of any of them shows in the server)."""
        return (self, *(self.base.layers() if self.base is not None else ()))
