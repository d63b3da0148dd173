"""The `mcpfuzz` command line. Heavy imports wait until a command runs, so `--help` stays fast."""

from mcpfuzz.cli.main import main

__all__ = ["main"]
