"""MCP server for AI agents: a thin stdio front to the running indexd daemon."""
