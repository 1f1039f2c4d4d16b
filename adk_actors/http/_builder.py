"""google-adk's agent builder routes (what adk-web's builder mode calls), on YAML apps.

* ``GET /dev/apps/{app}/builder?file_path=&tmp=``: an agent file of the app as YAML
  text (``root_agent.yaml`` when no path is given), or ``""`` when there is none (a
  Python app has none, as in google-adk). With ``tmp=true`` the file comes from the
  app's draft, ``<app folder>/tmp/<app>/``, made from the app's files on first use.
* ``POST /dev/apps/{app}/builder/save?tmp=``: the multipart ``files`` (named
  ``<app>/<path>.yaml``). With ``tmp=true`` they are written to the draft. Without,
  the draft and the files become the app, in this order: the app's folder as it would
  be is assembled in a scratch folder and loaded as the host would load it; only if
  that succeeds are its files written (each one replaced at once) and the draft
  removed. So a save that fails (a 400 naming the problem) changes nothing, and a
  saved app answers its next turn (:class:`~adk_actors.engine.AppCatalog` reads an
  edited app again).
* ``POST /dev/apps/{app}/builder/cancel``: the draft is removed.

Apps live in the host's ``agents_dir`` (``<name>/root_agent.yaml``); a YAML app named
in ``[apps]`` is edited where its file is. A Python app cannot be saved over (400).
Uploads are checked by :func:`~adk_actors.engine.check_builder_upload`: YAML only,
no code references (a dotted tool name would import code on the host), no path
outside the app. Every route needs the operator: it writes the host's agent files
(google-adk allows loopback callers only; on loopback without tokens we allow anyone,
as it does).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path, PurePosixPath

from fastapi import APIRouter, HTTPException, Request, UploadFile
from fastapi.responses import PlainTextResponse

from .._exceptions import AgentDefinitionError
from ..engine import (
    APP_NAME,
    DRAFT,
    ROOT_AGENT_FILE,
    YAML_SUFFIXES,
    app_file_path,
    check_builder_upload,
    load_agent_config,
)
from ..store import private_dir, write_private
from ._deps import Api, HostApi
from ._guard import require_operator

__all__ = ["router"]

router = APIRouter(prefix="/dev/apps/{app}/builder", tags=["agent builder"])

def _copy_yaml(source: Path, target: Path) -> None:
    """The YAML files under ``source`` (its draft aside) to ``target``, private."""
    for path in source.rglob("*"):
        relative = path.relative_to(source)
        if path.is_file() and path.suffix.lower() in YAML_SUFFIXES and relative.parts[0] != DRAFT:
            write_private(target / relative, path.read_bytes())


def _folder_of(api: HostApi, request: Request, app: str) -> Path:
    """The app's folder (403 for a non-operator, 400 for a Python app or a bad name)."""
    require_operator(request, "read or write agent files")
    folder = api.apps.folder(app)
    if folder is None:
        raise HTTPException(400, f"{app!r} is a Python app or not an app name (letters, digits, _): "
                                 "the builder edits YAML apps")
    return folder


def _draft_of(api: HostApi, app: str) -> Path:
    draft = api.apps.draft_folder(app)
    assert draft is not None  # folder_of answered first
    return draft


@router.get("", response_class=PlainTextResponse)
def read(app: str, request: Request, api: Api, file_path: str | None = None, tmp: bool = False) -> PlainTextResponse:
    try:
        folder = _folder_of(api, request, app)
    except HTTPException as exc:
        if exc.status_code == 403:
            raise
        return PlainTextResponse("")  # google-adk: "" for an app without agent files
    if tmp:
        draft = _draft_of(api, app)
        if not draft.is_dir() and folder.is_dir():
            private_dir(draft)
            _copy_yaml(folder, draft)
        folder = draft
    try:
        path = folder / app_file_path(app, file_path or ROOT_AGENT_FILE)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return PlainTextResponse(text, media_type="application/x-yaml", headers={"cache-control": "no-store"})


@router.post("/save")
async def save(app: str, files: list[UploadFile], request: Request, api: Api, tmp: bool = False) -> bool:
    folder = _folder_of(api, request, app)
    if not APP_NAME.fullmatch(app):
        raise HTTPException(400, f"{app!r}: an app name is letters, digits and _")
    uploads: dict[PurePosixPath, bytes] = {}
    try:
        for upload in files:
            path = app_file_path(app, upload.filename)
            content = await upload.read()
            check_builder_upload(str(path), content)
            uploads[path] = content
    except (ValueError, AgentDefinitionError) as exc:
        raise HTTPException(400, str(exc)) from None
    draft = _draft_of(api, app)
    if tmp:
        for path, content in uploads.items():
            write_private(draft / path, content)
        return True
    with tempfile.TemporaryDirectory() as scratch:
        staged = Path(scratch) / app
        staged.mkdir()
        if folder.is_dir():
            _copy_yaml(folder, staged)
        if draft.is_dir():
            _copy_yaml(draft, staged)
        for path, content in uploads.items():
            write_private(staged / path, content)
        if not (staged / ROOT_AGENT_FILE).is_file():
            raise HTTPException(400, f"the app has no {ROOT_AGENT_FILE}")
        try:
            load_agent_config(staged / ROOT_AGENT_FILE, deny_blocked_keys=True)  # google-adk's key denylist too
        except AgentDefinitionError as exc:
            raise HTTPException(400, str(exc).replace(str(staged), app)) from None
        _copy_yaml(staged, private_dir(folder))
    shutil.rmtree(folder / DRAFT, ignore_errors=True)
    return True


@router.post("/cancel")
def cancel(app: str, request: Request, api: Api) -> bool:
    shutil.rmtree(_folder_of(api, request, app) / DRAFT, ignore_errors=True)
    return True
