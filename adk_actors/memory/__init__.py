"""google-adk's ``google.adk.memory``: memory services, in process.

:class:`BaseMemoryService` is the class a user's own service subclasses (the
in-process Runner's agents use any subclass through their memory tools and
``search_memory``); :class:`InMemoryMemoryService` is google-adk's keyword-matching
one, :class:`SqliteMemoryService` its SQLite one (full-text search). The Vertex AI
services are refused when made, with a typed error naming what they need (no Google
Cloud client here).
"""

from ._sqlite_memory_service import SqliteMemoryService
from .base_memory_service import BaseMemoryService, SearchMemoryResponse
from .in_memory_memory_service import InMemoryMemoryService
from .memory_entry import MemoryEntry
from .vertex_ai_memory_bank_service import VertexAiMemoryBankService
from .vertex_ai_rag_memory_service import VertexAiRagMemoryService

__all__ = ["BaseMemoryService", "InMemoryMemoryService", "MemoryEntry", "SearchMemoryResponse",
           "SqliteMemoryService", "VertexAiMemoryBankService", "VertexAiRagMemoryService"]
