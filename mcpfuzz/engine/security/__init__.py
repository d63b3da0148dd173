"""--security: the temporary workspace mcpfuzz gives the server, its canaries, and the folder it watches."""
