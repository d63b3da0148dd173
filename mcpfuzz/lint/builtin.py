"""Import every built-in rule module so that each registers its rules."""

from mcpfuzz.lint import metadata, protocol, schema, sequence  # noqa: F401
