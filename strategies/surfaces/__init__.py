"""Case makers for the MCP surfaces besides tools: resources, resource templates, prompts, completions."""
