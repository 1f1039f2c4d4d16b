"""google-adk's ``RequestInput`` (``google.adk.events.request_input``): what a workflow
node yields to ask a human for an answer (what becomes of it: ``adk_actors.workflow``)."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, alias_generators

__all__ = ["RequestInput"]


class RequestInput(BaseModel):
    """A node's request for a human's answer (google-adk's fields): ``interrupt_id``
    (a new uuid unless given; the answer's function response id), ``payload`` (any
    JSON value to show with it), ``message`` (what to ask) and ``response_schema``
    (the answer's type: a Python type, a pydantic model, a generic alias or a JSON
    schema dict; None: any)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, alias_generator=alias_generators.to_camel,
                              populate_by_name=True)

    interrupt_id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    payload: Any = None
    message: str | None = None
    response_schema: Any = None
