"""--observe, --security: hooks loaded into the server report its side effects per call (files, processes, network)."""
