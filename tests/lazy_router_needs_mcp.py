"""A router whose module needs the ``mcp`` extra, for tests/test_http_lazy_routes.py
(imported on a request's first use by ``http._lazy.LazyRouter``)."""

from __future__ import annotations

import mcp
from fastapi import APIRouter

__all__ = ["router"]

router = APIRouter(prefix="/needs-mcp")


@router.get("/ping")
def ping() -> dict[str, str]:
    return {"mcp": mcp.__name__}
