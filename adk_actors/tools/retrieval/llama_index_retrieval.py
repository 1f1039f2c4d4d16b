"""google-adk's ``LlamaIndexRetrieval``: a LlamaIndex retriever as a tool.

The retriever is any object with ``retrieve(query)`` returning nodes that have a
``text`` (a ``llama_index`` ``BaseRetriever`` is one); llama_index itself is not
imported here.
"""

from __future__ import annotations

from typing import Any

from .._base import ToolContext
from .base_retrieval_tool import BaseRetrievalTool

__all__ = ["LlamaIndexRetrieval"]


class LlamaIndexRetrieval(BaseRetrievalTool):
    """``retriever`` answering the model's ``query`` with its best node's text."""

    def __init__(self, *, name: str, description: str, retriever: Any) -> None:
        super().__init__(name=name, description=description)
        self.retriever = retriever

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Ask the retriever for ``args["query"]`` (in this thread, as google-adk
        does; what it raises ends the call): the first node's ``text``, or a
        sentence saying nothing matched the query when it found no node."""
        query = args["query"]
        nodes = self.retriever.retrieve(query)
        if not nodes:
            return f"Nothing matched the query: {query}"
        return nodes[0].text
