"""google-adk's ``BaseRetrievalTool``: a tool the model calls with one ``query``
string to look something up (LlamaIndex, files, Vertex AI RAG)."""

from __future__ import annotations

from ..._types import FunctionDeclaration
from .._classes import BaseTool

__all__ = ["BaseRetrievalTool"]


class BaseRetrievalTool(BaseTool):
    """Declared to the model as a function of one string argument, ``query`` (as a
    JSON schema, as google-adk declares it); a subclass's ``run_async`` answers the
    query. Finding nothing is an answer that says so, not an error."""

    def _get_declaration(self) -> FunctionDeclaration:
        """The tool's name and description with the ``query`` argument's schema."""
        return FunctionDeclaration(
            name=self.name, description=self.description,
            parameters_json_schema={"type": "object", "properties": {
                "query": {"type": "string", "description": "What to look up."}}})
