"""The LLM layer. CONTRACT: build_roles(config: MemoryConfig, embedder: Embedder) -> Roles,
choosing ExtractiveRoles for "extractive" and PromptedRoles over an OpenAIBackend ("openai:")
or HFBackend ("hf:") otherwise; raises ConfigError on an unknown spec."""
