"""google-adk's ``LlmCapabilities``: what a model instance reports it can do."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LlmCapabilities(BaseModel):
    """The resolved capabilities of one model instance, as google-adk's model reports
    them: each field is the answer for that capability (no "auto" placeholder).

    Building one with a field it does not have raises a pydantic ``ValidationError``;
    assigning to a field of a built one raises too (it is a frozen snapshot: a
    different answer comes from a subclass of the model, not from editing this)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    output_schema_and_tools: bool = Field(
        default=False, description="True when the model takes an output schema and tools in one request.")


__all__ = ["LlmCapabilities"]
