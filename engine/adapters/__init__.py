"""hymem inside agent frameworks, each an optional extra: `hymem.adapters.langgraph`
(`hymem[langgraph]`), `hymem.adapters.llamaindex` (`hymem[llamaindex]`) and
`hymem.adapters.openai_agents` (`hymem[openai-agents]`)."""
