"""google-adk's memory route: ``PATCH /apps/{app}/users/{user}/memory`` with
``{"sessionId"}`` adds that session to the user's memory."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from ._deps import Api

__all__ = ["MemoryBody", "router"]

router = APIRouter(tags=["memory"])


class MemoryBody(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    session_id: str


@router.patch("/apps/{app}/users/{user}/memory")
def add_to_memory(app: str, user: str, body: MemoryBody, request: Request, api: Api) -> None:
    api.allowed(request, user, app)
    api.runner(app).add_session_to_memory(user, body.session_id)
