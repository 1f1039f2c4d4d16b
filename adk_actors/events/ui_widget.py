"""google-adk's ``UiWidget`` (``google.adk.events.ui_widget``): how a UI draws a widget
that goes with an event."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, alias_generators

__all__ = ["UiWidget"]


class UiWidget(BaseModel):
    """A widget to draw (google-adk's fields): ``id`` (the widget's own id),
    ``provider`` (which renderer draws it; ``"mcp"``: an MCP App in a frame) and
    ``payload`` (what that renderer needs; empty unless given). Unknown fields are a
    ValidationError; camelCase names are accepted too."""

    model_config = ConfigDict(extra="forbid", alias_generator=alias_generators.to_camel, populate_by_name=True)

    id: str
    provider: str
    payload: dict[str, Any] = Field(default_factory=dict)
