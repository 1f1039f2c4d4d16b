"""google-adk's ``google.adk.tools.retrieval``: tools the model calls with a query.

``BaseRetrievalTool`` (the ``query`` declaration), ``LlamaIndexRetrieval`` (any
retriever with ``retrieve(query)``), ``FilesRetrieval`` (a folder indexed by
LlamaIndex: llama-index must be installed, else making one raises ImportError) and
``VertexAiRagRetrieval`` (Gemini's own retrieval from Vertex AI RAG corpora; on
another model it is refused, see its module). All import without llama_index.
"""

from .base_retrieval_tool import BaseRetrievalTool
from .files_retrieval import FilesRetrieval
from .llama_index_retrieval import LlamaIndexRetrieval
from .vertex_ai_rag_retrieval import VertexAiRagRetrieval

__all__ = ["BaseRetrievalTool", "FilesRetrieval", "LlamaIndexRetrieval", "VertexAiRagRetrieval"]
