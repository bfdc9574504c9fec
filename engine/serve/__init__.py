"""Serving a memory to other processes: a REST API (`app`, FastAPI on uvicorn) and an MCP
server (`mcp_server`), each one process that owns the store as its single writer, plus the
API keys that bind callers to the users they may touch (`auth`)."""
