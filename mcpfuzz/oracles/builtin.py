"""Import every built-in oracle module so that each registers itself."""

from mcpfuzz.oracles import (  # noqa: F401
    canaries,
    cancellation,
    client,
    concurrency,
    error_codes,
    http,
    ids,
    leaks,
    lint,
    list_identity,
    memory,
    notifications,
    process,
    result_shapes,
    semantic,
    slow_input,
    surfaces,
    tasks,
    tool_results,
    versions,
)
