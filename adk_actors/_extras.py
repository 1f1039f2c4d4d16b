"""The optional extras of adk-actors and what to say when one is missing.

An extra is a set of packages ``pip install 'adk-actors[NAME]'`` adds (pyproject's
``[project.optional-dependencies]``). Code that needs one imports it as usual; where
the ``ModuleNotFoundError`` is caught (loading an app, serving a route),
:func:`missing_extra` tells whether it was an extra's module and gives the one line
to show: which extra, which package, and the pip command.
"""

from __future__ import annotations

__all__ = ["EXTRAS", "extra_hint", "missing_extra"]

#: module (its top level, or a dotted name where its top level is shared) -> (extra, the package)
EXTRAS: dict[str, tuple[str, str]] = {
    "a2a": ("a2a", "a2a-sdk"),
    "mcp": ("mcp", "mcp"),
    "cryptography": ("crypto", "cryptography"),
    "opentelemetry": ("otel", "opentelemetry-api"),
    "nltk": ("eval", "nltk"),
    "litellm": ("litellm", "litellm"),
    "google.genai": ("genai", "google-genai"),
    "langchain_core": ("langchain", "langchain-core"),
    "langgraph": ("langgraph", "langgraph"),
    "crewai": ("crewai", "crewai"),
}


def extra_hint(extra: str) -> str:
    """``the EXTRA extra (PACKAGE) is not installed: pip install 'adk-actors[EXTRA]'``."""
    package = next((pkg for name, pkg in EXTRAS.values() if name == extra), extra)
    return f"the {extra} extra ({package}) is not installed: pip install 'adk-actors[{extra}]'"


def missing_extra(error: BaseException | None) -> str | None:
    """:func:`extra_hint` for the extra whose module ``error`` (or an error it was
    raised from, or during) could not import; None when no extra's module is missing."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ModuleNotFoundError):
            name = error.name or ""
            found = next((module for module in (name, *(name[:i] for i, c in enumerate(name) if c == "."))
                          if module in EXTRAS), None)
            if found is not None:
                return extra_hint(EXTRAS[found][0])
        error = error.__cause__ or error.__context__
    return None
