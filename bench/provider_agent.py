"""The agent bench/models.py streams through the host (model served by a stub server)."""

from adk_actors import LlmAgent

agent = LlmAgent(name="streamer", model="stubbed")
