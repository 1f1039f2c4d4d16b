"""google-adk's artifact routes, under ``/apps/{app}/users/{user}/sessions/{session_id}/artifacts``.

Versions are numbers from 0; ``latest`` names the newest in a path. A version's
metadata is google-adk's ``ArtifactVersion`` (``canonicalUri`` names it in this host).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from .._types import Part
from ._deps import Api, HostApi
from ._wire import part_json

__all__ = ["SaveArtifactBody", "router"]

router = APIRouter(prefix="/apps/{app}/users/{user}/sessions/{session_id}/artifacts", tags=["artifacts"])


class SaveArtifactBody(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    filename: str
    artifact: dict[str, Any]
    custom_metadata: dict[str, Any] | None = None


def _version_param(version: str) -> int | None:
    """A version in a path: a number, or ``latest`` (None); anything else is a 422."""
    if version == "latest":
        return None
    if not version.isdigit():
        raise HTTPException(422, "version must be a number or 'latest'")
    return int(version)


def _version_json(app: str, user: str, session_id: str, name: str, meta: dict[str, Any] | None) -> dict[str, Any]:
    """google-adk's ArtifactVersion for what the store recorded (404 when nothing)."""
    if meta is None:
        raise HTTPException(404, "Artifact not found")
    version = meta["version"]
    return {"version": version, "mimeType": meta["mime_type"], "createTime": meta["created"],
            "customMetadata": meta.get("custom_metadata") or {},
            "canonicalUri": f"artifact://apps/{app}/users/{user}/sessions/{session_id}/artifacts/{name}"
                            f"/versions/{version}"}


def _load(api: HostApi, app: str, user: str, session_id: str, name: str, version: int | None) -> Any:
    part = api.runner(app).load_artifact(user, session_id, name, version)
    if part is None:
        raise HTTPException(404, "Artifact not found")
    return part_json(part)


@router.get("")
def list_artifacts(app: str, user: str, session_id: str, request: Request, api: Api) -> Any:
    api.allowed(request, user, app)
    return api.runner(app).list_artifacts(user, session_id)


@router.post("")
def save_artifact(app: str, user: str, session_id: str, body: SaveArtifactBody, request: Request, api: Api) -> Any:
    api.allowed(request, user, app)
    try:
        part = Part.model_validate(body.artifact)
    except ValidationError as exc:
        raise HTTPException(422, f"artifact is not a Part: {exc.errors()[0]['msg']}") from None
    run = api.runner(app)
    version = run.save_artifact(user, session_id, body.filename, part, body.custom_metadata)
    return _version_json(app, user, session_id, body.filename,
                         run.artifact_metadata(user, session_id, body.filename, version))


@router.get("/{name}/versions/metadata")
def artifact_versions_metadata(app: str, user: str, session_id: str, name: str, request: Request, api: Api) -> Any:
    api.allowed(request, user, app)
    run = api.runner(app)
    return [_version_json(app, user, session_id, name, run.artifact_metadata(user, session_id, name, v))
            for v in run.artifact_versions(user, session_id, name)]


@router.get("/{name}/versions/{version}/metadata")
def artifact_version_metadata(app: str, user: str, session_id: str, name: str, version: str, request: Request,
                              api: Api) -> Any:
    api.allowed(request, user, app)
    return _version_json(app, user, session_id, name,
                         api.runner(app).artifact_metadata(user, session_id, name, _version_param(version)))


@router.get("/{name}/versions")
def artifact_versions(app: str, user: str, session_id: str, name: str, request: Request, api: Api) -> Any:
    api.allowed(request, user, app)
    return api.runner(app).artifact_versions(user, session_id, name)


@router.get("/{name}/versions/{version}")
def artifact_version(app: str, user: str, session_id: str, name: str, version: str, request: Request,
                     api: Api) -> Any:
    api.allowed(request, user, app)
    return _load(api, app, user, session_id, name, _version_param(version))


@router.get("/{name}")
def get_artifact(app: str, user: str, session_id: str, name: str, request: Request, api: Api,
                 version: Annotated[int | None, Query(ge=0)] = None) -> Any:
    api.allowed(request, user, app)
    return _load(api, app, user, session_id, name, version)


@router.delete("/{name}")
def delete_artifact(app: str, user: str, session_id: str, name: str, request: Request, api: Api) -> None:
    api.allowed(request, user, app)
    api.runner(app).delete_artifact(user, session_id, name)
