"""google-adk's ``google.adk.evaluation.common`` path: :class:`EvalBaseModel`, the base
of google-adk's eval types, for a user's own eval data."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["EvalBaseModel"]


class EvalBaseModel(BaseModel):
    """A model whose fields are read by their snake_case names and their camelCase
    aliases, written camelCase with ``by_alias=True``; a field it does not declare is a
    validation error; any Python type may be a field's type (google-adk's settings)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid",
                              arbitrary_types_allowed=True)
