"""The competing agents: LLM families reached over an OpenAI-compatible API, and baselines."""
