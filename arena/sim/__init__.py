"""The simulated sources: an offline Polymarket-like world and the model server's personas.

Why a package: the demo, the tests and the benchmarks run the whole engine without a network
or keys against these two fakes. The world (`world`, over `listings`, `paths`, `questions`
and the templates in `questions.toml`) answers as the Gamma client does; the model server
(`model_server`, over `personas`, `prompt_view`, `models`, `replies` and `wire`) answers as
an OpenAI-compatible endpoint does, reading the world's hidden truth.
"""
