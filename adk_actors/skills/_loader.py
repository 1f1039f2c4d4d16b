"""Reading skills from folders (google-adk's ``google.adk.skills`` loaders).

A skill folder is named as its skill and holds ``SKILL.md`` (or ``skill.md``): a YAML
frontmatter between two ``---`` lines, then the instructions; and optionally
``references/``, ``assets/`` and ``scripts/``, read whole (``__pycache__`` skipped; a
file that is not UTF-8 kept as bytes, a script that is not UTF-8 dropped with a
warning). The errors are google-adk's types: ``FileNotFoundError`` for a missing folder
or SKILL.md, ``ValueError`` for a malformed SKILL.md or a name that is not the folder's,
pydantic's ``ValidationError`` (a ``ValueError``) for frontmatter that breaks
:class:`~adk_actors.skills.Frontmatter`'s rules. The Google Cloud Storage loaders are
refused (:class:`~adk_actors.errors.ServiceUnavailableError`).
"""

from __future__ import annotations

import asyncio
import io
import logging
import pathlib
import zipfile
from collections.abc import Callable
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors._unavailable import ServiceUnavailableError, unavailable
from . import models
from ._paths import safe_relative_path

_log = logging.getLogger("adk_actors.skills")

_SKILL_FILES = ("SKILL.md", "skill.md")
_MAX_ZIP_ENTRIES = 2000
_MAX_ZIP_BYTES = 32 * 1024 * 1024
_ZIP_CHUNK = 64 * 1024


def parse_skill_md(content: str) -> tuple[dict[str, Any], str]:
    """SKILL.md's text as (frontmatter mapping, stripped body). Raises ``ValueError``
    when the text does not open with ``---``, has no closing ``---``, its frontmatter
    is not valid YAML, or is not a mapping."""
    if not content.startswith("---"):
        raise ValueError("SKILL.md has to open with a YAML frontmatter block: a first line of ---")
    pieces = content.split("---", 2)
    if len(pieces) < 3:
        raise ValueError("SKILL.md's frontmatter block has no closing --- line")
    try:
        parsed = yaml.safe_load(pieces[1])
    except yaml.YAMLError as exc:
        raise ValueError(f"SKILL.md's frontmatter is not valid YAML: {exc}") from exc
    if not isinstance(parsed, dict):
        raise ValueError("SKILL.md's frontmatter has to be a YAML mapping of keys to values")
    return parsed, pieces[2].strip()


def _skill_md_of(folder: pathlib.Path) -> pathlib.Path:
    """The SKILL.md (or skill.md) of ``folder``; ``FileNotFoundError`` when ``folder``
    is not a folder or has neither."""
    if not folder.is_dir():
        raise FileNotFoundError(f"There is no skill folder at '{folder}'.")
    for name in _SKILL_FILES:
        if (folder / name).exists():
            return folder / name
    raise FileNotFoundError(f"The skill folder '{folder}' has no SKILL.md.")


def _read_files(folder: pathlib.Path) -> dict[str, str | bytes]:
    """Every file under ``folder`` (none when it is missing), keyed by its POSIX path
    relative to it: text when UTF-8, else bytes; ``__pycache__`` skipped."""
    found: dict[str, str | bytes] = {}
    if not folder.is_dir():
        return found
    for path in folder.rglob("*"):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        key = path.relative_to(folder).as_posix()
        try:
            found[key] = path.read_text(encoding="utf-8")  # newlines read as text reads them
        except UnicodeDecodeError:
            found[key] = path.read_bytes()
    return found


def scripts_of(files: dict[str, str | bytes]) -> dict[str, models.Script]:
    """``files`` as Scripts; one that is not UTF-8 text is left out with a warning."""
    scripts: dict[str, models.Script] = {}
    for name, source in files.items():
        if isinstance(source, bytes):
            try:
                source = source.decode("utf-8")
            except UnicodeDecodeError:
                _log.warning("skill script %r is not UTF-8 text; it is left out", name)
                continue
        scripts[name] = models.Script(src=source)
    return scripts


def _check_name(frontmatter: models.Frontmatter, folder_name: str) -> None:
    if frontmatter.name != folder_name:
        raise ValueError(f"The skill is named '{frontmatter.name}' but its folder is"
                         f" '{folder_name}': the two have to be the same.")


def load_skill_from_dir(skill_dir: str | pathlib.Path) -> models.Skill:
    """The skill in ``skill_dir``, in order: the folder resolved; its SKILL.md read and
    parsed (:func:`parse_skill_md`); the frontmatter validated; its name checked against
    the folder's; ``references/``, ``assets/`` and ``scripts/`` read. Raises as the
    module says."""
    folder = pathlib.Path(skill_dir).resolve()
    parsed, body = parse_skill_md(_skill_md_of(folder).read_text(encoding="utf-8"))
    frontmatter = models.Frontmatter.model_validate(parsed)
    _check_name(frontmatter, folder.name)
    resources = models.Resources(references=_read_files(folder / "references"),
                                 assets=_read_files(folder / "assets"),
                                 scripts=scripts_of(_read_files(folder / "scripts")))
    skill = models.Skill(frontmatter=frontmatter, instructions=body, resources=resources)
    skill._uri = folder.as_uri()
    return skill


def load_skills_from_dir(skills_dir: str | pathlib.Path) -> list[models.Skill]:
    """Every skill in the sub-folders of ``skills_dir`` that have a SKILL.md, by folder
    name. Raises ``FileNotFoundError`` when ``skills_dir`` does not exist, ``ValueError``
    when it is not a folder; the first skill that fails to load raises as
    :func:`load_skill_from_dir` does."""
    folder = pathlib.Path(skills_dir).resolve()
    if not folder.exists():
        raise FileNotFoundError(f"There is no skills folder at '{folder}'.")
    if not folder.is_dir():
        raise ValueError(f"'{folder}' is a file, not a skills folder.")
    return [load_skill_from_dir(sub) for sub in sorted(folder.iterdir())
            if sub.is_dir() and any((sub / name).exists() for name in _SKILL_FILES)]


def list_skills_in_dir(skills_base_path: str | pathlib.Path,
                       on_error: Callable[[str, Exception], None] | None = None) -> dict[str, models.Frontmatter]:
    """The frontmatter of each skill under ``skills_base_path``, keyed by folder name,
    by folder name's order; only SKILL.md is read. A folder that fails (no SKILL.md, a
    bad frontmatter, a name not the folder's) is handed to ``on_error(name, error)``
    when given (what it raises ends the listing), else logged as a warning and left
    out. A base path that is not a folder gives ``{}`` with a warning."""
    base = pathlib.Path(skills_base_path).resolve()
    listed: dict[str, models.Frontmatter] = {}
    if not base.is_dir():
        _log.warning("skills base path '%s' is not a folder; no skills listed", base)
        return listed
    for folder in sorted(base.iterdir()):
        if not folder.is_dir():
            continue
        try:
            parsed, _ = parse_skill_md(_skill_md_of(folder).read_text(encoding="utf-8"))
            frontmatter = models.Frontmatter.model_validate(parsed)
            _check_name(frontmatter, folder.name)
        except (FileNotFoundError, ValueError, ValidationError) as exc:
            if on_error is not None:
                on_error(folder.name, exc)
            else:
                _log.warning("skill folder '%s' under '%s' left out: %s", folder.name, base, exc)
            continue
        listed[folder.name] = frontmatter
    return listed


async def load_skill_from_dir_async(skill_dir: str | pathlib.Path) -> models.Skill:
    """:func:`load_skill_from_dir` on a worker thread; raises as it does."""
    return await asyncio.to_thread(load_skill_from_dir, skill_dir)


async def load_skills_from_dir_async(skills_dir: str | pathlib.Path) -> list[models.Skill]:
    """:func:`load_skills_from_dir` on one worker thread; raises as it does."""
    return await asyncio.to_thread(load_skills_from_dir, skills_dir)


async def list_skills_in_dir_async(
        skills_base_path: str | pathlib.Path,
        on_error: Callable[[str, Exception], None] | None = None) -> dict[str, models.Frontmatter]:
    """:func:`list_skills_in_dir` on a worker thread (``on_error`` is called there)."""
    return await asyncio.to_thread(list_skills_in_dir, skills_base_path, on_error)


def _refuse(name: str, bucket_name: str) -> ServiceUnavailableError:
    return ServiceUnavailableError(unavailable(
        name, f"Google Cloud Storage (bucket {bucket_name!r})",
        "load_skill_from_dir / load_skills_from_dir / list_skills_in_dir on a local folder"))


def list_skills_in_gcs_dir(bucket_name: str, skills_base_path: str = "", project_id: str | None = None,
                           credentials: Any = None,
                           on_error: Callable[[str, Exception], None] | None = None) -> dict[str, models.Frontmatter]:
    """Refused: raises :class:`~adk_actors.errors.ServiceUnavailableError` (the
    arguments are google-adk's)."""
    raise _refuse("list_skills_in_gcs_dir", bucket_name)


def load_skill_from_gcs_dir(bucket_name: str, skill_id: str, skills_base_path: str = "",
                            project_id: str | None = None, credentials: Any = None) -> models.Skill:
    """Refused: raises :class:`~adk_actors.errors.ServiceUnavailableError` (the
    arguments are google-adk's)."""
    raise _refuse("load_skill_from_gcs_dir", bucket_name)


async def load_skill_from_gcs_dir_async(bucket_name: str, skill_id: str, skills_base_path: str = "",
                                        project_id: str | None = None, credentials: Any = None) -> models.Skill:
    """Refused as :func:`load_skill_from_gcs_dir` is, when awaited."""
    raise _refuse("load_skill_from_gcs_dir_async", bucket_name)


async def list_skills_in_gcs_dir_async(
        bucket_name: str, skills_base_path: str = "", project_id: str | None = None, credentials: Any = None,
        on_error: Callable[[str, Exception], None] | None = None) -> dict[str, models.Frontmatter]:
    """Refused as :func:`list_skills_in_gcs_dir` is, when awaited."""
    raise _refuse("list_skills_in_gcs_dir_async", bucket_name)


def _read_member(archive: zipfile.ZipFile, member: str | zipfile.ZipInfo, budget: int) -> tuple[bytes, int]:
    """One member's bytes, read in chunks, and the byte budget left; ``ValueError`` when
    it goes past the budget or the archive is broken; ``KeyError`` when absent."""
    chunks = []
    try:
        with archive.open(member) as handle:
            while chunk := handle.read(_ZIP_CHUNK):
                budget -= len(chunk)
                if budget < 0:
                    raise ValueError(f"The skill archive unpacks to more than {_MAX_ZIP_BYTES} bytes.")
                chunks.append(chunk)
    except zipfile.BadZipFile as exc:
        raise ValueError(f"The skill archive is damaged: {exc}") from exc
    return b"".join(chunks), budget


def _zip_folder(archive: zipfile.ZipFile, prefix: str, budget: int) -> tuple[dict[str, str | bytes], int]:
    """The files of the archive under ``prefix/`` (as :func:`_read_files` keys them)."""
    found: dict[str, str | bytes] = {}
    for info in archive.infolist():
        if info.is_dir() or not info.filename.startswith(prefix + "/") or "__pycache__" in info.filename:
            continue
        relative = info.filename[len(prefix) + 1:]
        if not relative:
            continue
        key = safe_relative_path(relative)
        if key in found:
            raise ValueError(f"Two files of the skill archive both resolve to {key!r}.")
        data, budget = _read_member(archive, info, budget)
        try:
            found[key] = data.decode("utf-8")
        except UnicodeDecodeError:
            found[key] = data
    return found, budget


def load_skill_from_zip_bytes(zip_bytes: bytes) -> models.Skill:
    """The skill packed in a zip archive (SKILL.md at its top), as a registry may hand
    one over. In order: the archive opened (``ValueError`` when damaged); its entry
    count and declared size checked against the limits (2000 entries, 32 MiB); every
    entry's path checked (``ValueError`` for one that climbs out or is absolute);
    SKILL.md read (``FileNotFoundError`` when absent) and its frontmatter validated
    (its name has to be a bare name); the three folders read."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(zip_bytes))
    except zipfile.BadZipFile as exc:
        raise ValueError(f"The skill archive is damaged: {exc}") from exc
    with archive:
        infos = archive.infolist()
        if len(infos) > _MAX_ZIP_ENTRIES:
            raise ValueError(f"The skill archive has {len(infos)} entries; at most {_MAX_ZIP_ENTRIES} are read.")
        if sum(info.file_size for info in infos) > _MAX_ZIP_BYTES:
            raise ValueError(f"The skill archive unpacks to more than {_MAX_ZIP_BYTES} bytes.")
        for info in infos:
            if info.is_dir() and info.filename.replace("\\", "/").strip("/") in ("", "."):
                continue
            try:
                safe_relative_path(info.filename)
            except ValueError as exc:
                raise ValueError(f"The skill archive holds an unsafe entry: {info.filename}") from exc
        budget, text = _MAX_ZIP_BYTES, None
        for name in _SKILL_FILES:
            try:
                data, budget = _read_member(archive, name, budget)
            except KeyError:
                continue
            text = data.decode("utf-8")
            break
        if text is None:
            raise FileNotFoundError("The skill archive has no SKILL.md at its top.")
        parsed, body = parse_skill_md(text)
        named = parsed.get("name")
        if not isinstance(named, str) or not named or pathlib.PurePath(named).name != named:
            raise ValueError(f"The skill archive's SKILL.md names no usable skill: {named!r}")
        frontmatter = models.Frontmatter.model_validate(parsed)
        references, budget = _zip_folder(archive, "references", budget)
        assets, budget = _zip_folder(archive, "assets", budget)
        scripts, budget = _zip_folder(archive, "scripts", budget)
    resources = models.Resources(references=references, assets=assets, scripts=scripts_of(scripts))
    return models.Skill(frontmatter=frontmatter, instructions=body, resources=resources)
