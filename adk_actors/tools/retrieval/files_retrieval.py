"""google-adk's ``FilesRetrieval``: the files of a folder indexed by LlamaIndex
(``VectorStoreIndex`` over ``SimpleDirectoryReader``), searched by the model's query.

It needs ``llama-index-core`` (and, for the default embedding model, Gemini's
``gemini-embedding-2-preview`` through ``llama-index-embeddings-google-genai``),
which no adk-actors extra installs: without them, making one raises ImportError
naming the packages. With them, the folder is read and embedded when the tool is made.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from .llama_index_retrieval import LlamaIndexRetrieval

__all__ = ["FilesRetrieval"]

logger = logging.getLogger(__name__)

_DEFAULT_EMBEDDING_MODEL = "gemini-embedding-2-preview"


def _module(name: str, package: str, why: str) -> Any:
    """Module ``name``; an ImportError naming ``package`` (and ``why``) when it is missing."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(f"FilesRetrieval {why} needs {package}, which is not installed (no adk-actors extra "
                          f"installs it): pip install {package}") from exc


class FilesRetrieval(LlamaIndexRetrieval):
    """The files under ``input_dir`` as a LlamaIndex vector index (see the module)."""

    def __init__(self, *, name: str, description: str, input_dir: str, embedding_model: Any = None) -> None:
        """In order: llama_index imported (an ImportError naming the package when it is
        missing); without ``embedding_model``, Gemini's embedding model through
        llama_index's google-genai embeddings (an ImportError when missing); the
        folder's files read and indexed with it; the index's retriever kept."""
        self.input_dir = input_dir
        core = _module("llama_index.core", "llama-index-core", "(an index of the files)")
        if embedding_model is None:
            embeddings = _module("llama_index.embeddings.google_genai", "llama-index-embeddings-google-genai",
                                 "(its default embedding model)")
            embedding_model = embeddings.GoogleGenAIEmbedding(model_name=_DEFAULT_EMBEDDING_MODEL,
                                                              embed_batch_size=1)
        logger.info("FilesRetrieval %s: indexing %s", name, input_dir)
        documents = core.SimpleDirectoryReader(input_dir).load_data()
        index = core.VectorStoreIndex.from_documents(documents, embed_model=embedding_model)
        super().__init__(name=name, description=description, retriever=index.as_retriever())
