"""The MCP door (docs/agents.md): every route of the registry as a tool for AI agents.
The SDK is the optional extra `kinetoscope[mcp]`, imported only when the server starts."""
