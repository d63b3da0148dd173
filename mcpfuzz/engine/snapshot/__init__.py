"""`mcpfuzz snapshot`: the server's declared surface as a reviewable file, and the changes between two of them."""
