"""google-adk's skills run here with their imports rewritten (issue 52): ``adk_actors.skills``
and ``adk_actors.tools.skill_toolset``, side by side with google-adk 2.13.

* One skill folder (SKILL.md with frontmatter, references, assets with a binary file,
  a Python and a shell script) is loaded by both: the same models, ``_uri``, listing and
  catalog XML.
* Broken SKILL.md files fail on both with google-adk's exception type (pydantic's
  ``ValidationError`` where its frontmatter breaks a rule), with a message of our own.
* An agent with a ``SkillToolset`` runs in process (``InMemoryRunner``) against the
  Gemini REST stand-in on both sides; the scripted model lists the skills, loads one,
  reads a text and a binary resource, runs both scripts (through each side's code
  executor) and misses a file. Compared: the events, state and requests as
  ``google_adk_harness`` reads them, with the prose each side words its own way
  replaced by a marker first: the guidance the toolset adds to the system instruction
  (each side's own text, checked present; the identity sentence each side adds is
  left out, as the harness leaves it out), the tools' descriptions, the ``error``
  texts, the binary-file status, and the line that introduces the binary file's bytes;
  and the wire form of those bytes (google-adk sends url-safe base64 under
  ``mime_type``, we send standard base64 under ``mimeType``: both Gemini's), compared
  as the bytes and MIME type.
  Everything else (tool names, parameter schemas, response keys and values, error
  codes, the bytes sent to the model) is compared as it is.
* Ours only: a script runs in ``SandboxedCodeExecutor``'s child process, never in this
  one; the Google Cloud Storage loaders are refused with a typed error.
"""

from __future__ import annotations

import asyncio
import base64
import os
import pathlib
import warnings
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program
from pydantic import ValidationError

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

SKILL_MD = """---
name: pdf-helper
description: Fills PDF forms & reads <fields>.
license: Apache-2.0
compatibility: python3 and bash
allowed-tools: read_file
metadata:
  version: "1.2"
  adk_additional_tools: [stamp_pdf]
---
# Filling a PDF form

1. Read `references/guide.md`.
2. Run `scripts/fields.py` with the form's name.
"""

FIELDS_PY = """import json
import sys

with open("assets/fields.json") as handle:
    fields = json.load(handle)
print("argv:", sys.argv[1:])
print("fields:", ", ".join(fields))
"""

GREET_SH = 'echo "hello $1"\necho "careful" >&2\n'


def make_skill(root: pathlib.Path) -> pathlib.Path:
    """A skills folder with one skill, ``pdf-helper``, with a file in each folder."""
    skill = root / "skills" / "pdf-helper"
    for sub in ("references/forms", "assets", "scripts"):
        (skill / sub).mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "references" / "guide.md").write_text("Each field is one line.\n")
    (skill / "references" / "forms" / "w9.md").write_text("The W-9 form.\n")
    (skill / "assets" / "fields.json").write_text('["name", "date"]\n')
    (skill / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    (skill / "scripts" / "fields.py").write_text(FIELDS_PY)
    (skill / "scripts" / "greet.sh").write_text(GREET_SH)
    (skill / "scripts" / "fill.rb").write_text('puts "ruby"\n')
    (root / "skills" / "notes.txt").write_text("not a skill\n")
    return skill


@pytest.fixture
def skill_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    return make_skill(tmp_path)


# -- loading ------------------------------------------------------------------------------


def test_a_skill_folder_loads_to_the_same_models_as_on_google_adk(skill_dir: pathlib.Path) -> None:
    from google.adk import skills as theirs

    from adk_actors import skills as ours

    a, b = theirs.load_skill_from_dir(skill_dir), ours.load_skill_from_dir(skill_dir)
    assert b.model_dump() == a.model_dump()
    assert b.frontmatter.model_dump(by_alias=True) == a.frontmatter.model_dump(by_alias=True)
    assert b._uri == a._uri == skill_dir.resolve().as_uri()
    assert b.resources.get_asset("logo.png") == a.resources.get_asset("logo.png") == b"\x89PNG\r\n\x1a\n\x00\xff\xfe"
    assert b.resources.list_references() == a.resources.list_references()
    assert str(b.resources.get_script("fields.py")) == FIELDS_PY
    assert b.name == "pdf-helper" and b.description == a.description

    root = skill_dir.parent
    assert [s.model_dump() for s in ours.load_skills_from_dir(root)] == \
        [s.model_dump() for s in theirs.load_skills_from_dir(root)]
    listed = {k: v.model_dump() for k, v in ours.list_skills_in_dir(root).items()}
    assert listed == {k: v.model_dump() for k, v in theirs.list_skills_in_dir(root).items()}
    assert asyncio.run(ours.load_skill_from_dir_async(skill_dir)).model_dump() == a.model_dump()
    assert len(asyncio.run(ours.load_skills_from_dir_async(root))) == 1
    assert set(asyncio.run(ours.list_skills_in_dir_async(root))) == {"pdf-helper"}

    from google.adk.skills import prompt as their_prompt
    assert ours.format_skills_as_xml([b, b.frontmatter]) == their_prompt.format_skills_as_xml([a, a.frontmatter])
    assert ours.format_skills_as_xml([]) == their_prompt.format_skills_as_xml([])


BAD = {
    "no frontmatter": "# Just text\n",
    "unclosed frontmatter": "---\nname: bad-skill\n",
    "invalid yaml": "---\nname: [bad-skill\n---\nbody\n",
    "not a mapping": "---\n- a\n- b\n---\nbody\n",
    "missing name": "---\ndescription: Does things.\n---\nbody\n",
    "missing description": "---\nname: bad-skill\n---\nbody\n",
    "uppercase name": "---\nname: Bad-Skill\ndescription: Does things.\n---\nbody\n",
    "name not the folder's": "---\nname: other-skill\ndescription: Does things.\n---\nbody\n",
    "additional tools not a list": "---\nname: bad-skill\ndescription: x\nmetadata:\n  adk_additional_tools: t\n---\n",
}


def _raised(load: Any, *args: Any) -> BaseException:
    with pytest.raises(Exception) as caught:
        load(*args)
    return caught.value


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_skill_md_fails_with_google_adks_exception_type(case: str, tmp_path: pathlib.Path) -> None:
    from google.adk import skills as theirs

    from adk_actors import skills as ours

    folder = tmp_path / "skills" / "bad-skill"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(BAD[case])
    their_error, our_error = _raised(theirs.load_skill_from_dir, folder), _raised(ours.load_skill_from_dir, folder)
    assert type(our_error).__name__ == type(their_error).__name__
    assert isinstance(our_error, ValueError)
    assert isinstance(our_error, ValidationError) == isinstance(their_error, ValidationError)
    assert str(our_error)
    # listing: the folder is handed to on_error with an error of the same type, or skipped
    seen: dict[str, list[str]] = {"theirs": [], "ours": []}
    theirs.list_skills_in_dir(tmp_path / "skills", on_error=lambda n, e: seen["theirs"].append(type(e).__name__))
    assert ours.list_skills_in_dir(tmp_path / "skills",
                                   on_error=lambda n, e: seen["ours"].append(type(e).__name__)) == {}
    assert seen["ours"] == seen["theirs"] == [type(their_error).__name__]


def test_missing_folders_and_files_fail_as_on_google_adk(tmp_path: pathlib.Path) -> None:
    from google.adk import skills as theirs

    from adk_actors import skills as ours

    (tmp_path / "empty-skill").mkdir()
    (tmp_path / "a-file").write_text("x")
    for load, where in (("load_skill_from_dir", tmp_path / "nowhere"), ("load_skill_from_dir", tmp_path / "empty-skill"),
                        ("load_skills_from_dir", tmp_path / "nowhere"), ("load_skills_from_dir", tmp_path / "a-file")):
        their_error = _raised(getattr(theirs, load), where)
        our_error = _raised(getattr(ours, load), where)
        assert type(our_error) is type(their_error), (load, where)
    assert ours.list_skills_in_dir(tmp_path / "nowhere") == theirs.list_skills_in_dir(tmp_path / "nowhere") == {}


def test_google_cloud_storage_loaders_are_refused_with_a_typed_error() -> None:
    from adk_actors import skills as ours
    from adk_actors.errors import ServiceUnavailableError

    refused = [lambda: ours.load_skill_from_gcs_dir("my-bucket", "pdf-helper"),
               lambda: ours.list_skills_in_gcs_dir("my-bucket", skills_base_path="skills"),
               lambda: asyncio.run(ours.load_skill_from_gcs_dir_async("my-bucket", "pdf-helper")),
               lambda: asyncio.run(ours.list_skills_in_gcs_dir_async("my-bucket"))]
    for call in refused:
        with pytest.raises(ServiceUnavailableError, match="Google Cloud Storage") as caught:
            call()
        assert isinstance(caught.value, NotImplementedError) and "my-bucket" in str(caught.value)


def test_the_default_instruction_moved_to_the_toolset_module_with_a_warning() -> None:
    from adk_actors import skills
    from adk_actors.skills import prompt
    from adk_actors.tools import skill_toolset

    for module in (skills, prompt):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert module.DEFAULT_SKILL_SYSTEM_INSTRUCTION == skill_toolset.DEFAULT_SKILL_SYSTEM_INSTRUCTION
        assert [w.category for w in caught] == [DeprecationWarning]
    text = skill_toolset.DEFAULT_SKILL_SYSTEM_INSTRUCTION
    for name in ("load_skill", "load_skill_resource", "run_skill_script", "SKILL.md", "references/", "scripts/"):
        assert name in text


# -- an agent with a SkillToolset, side by side -----------------------------------------------

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.code_executors import UnsafeLocalCodeExecutor
from google.adk.runners import InMemoryRunner
from google.adk.skills import load_skill_from_dir
from google.adk.tools.skill_toolset import SkillToolset
from google.genai import types

def stamp_pdf(form: str) -> dict:
    """Stamps a filled form."""
    return {"stamped": form}

async def main(turns, folder):
    toolset = SkillToolset(skills=[load_skill_from_dir(folder)], code_executor=UnsafeLocalCodeExecutor(),
                           additional_tools=[stamp_pdf])
    agent = Agent(name="forms", model="gemini-2.5-flash", instruction="Help with forms.", tools=[toolset])
    runner = InMemoryRunner(agent=agent, app_name="forms_app")
    session = await runner.session_service.create_session(app_name="forms_app", user_id="ivy")
    seen, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="ivy", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="forms_app", user_id="ivy", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

SCRIPT = [
    calls(("list_skills", {})),
    calls(("load_skill", {"skill_name": "pdf-helper"})),
    calls(("load_skill_resource", {"skill_name": "pdf-helper", "file_path": "references/guide.md"})),
    calls(("load_skill_resource", {"skill_name": "pdf-helper", "file_path": "assets/logo.png"})),
    calls(("run_skill_script", {"skill_name": "pdf-helper", "file_path": "scripts/fields.py",
                                "args": {"form": "w9"}, "positional_args": ["draft"]})),
    calls(("run_skill_script", {"skill_name": "pdf-helper", "file_path": "greet.sh", "args": ["ann"]})),
    calls(("stamp_pdf", {"form": "w9"})),
    calls(("load_skill_resource", {"skill_name": "pdf-helper", "file_path": "references/missing.md"})),
    calls(("run_skill_script", {"skill_name": "pdf-helper", "file_path": "scripts/fill.rb"})),
    calls(("run_skill_script", {"skill_name": "pdf-helper", "file_path": "scripts/none.py"})),
    calls(("run_skill_script", {"skill_name": "pdf-helper", "file_path": "scripts/gone.py"})),
    calls(("load_skill", {"skill_name": "no-such-skill"})),
    gemini_response(text="The W-9 is filled in."),
]


CORE = {"list_skills", "load_skill", "load_skill_resource", "run_skill_script"}


def _side_texts(side: str, allowed: set[str] = CORE, prefix: str | None = None,
                unload: bool = False, scripts: bool = True) -> dict[str, str]:
    """The prose each side words its own way, mapped to a marker: the toolset's
    guidance (for the tools an agent gets: ``allowed``, ``prefix``, ``unload``), the
    line on ``search_skills``, and the binary-file texts."""
    p = f"{prefix}_" if prefix else ""
    if side == "theirs":
        from google.adk.tools import skill_toolset as module
        guidance = module._build_skill_system_instruction(prefix=prefix, allowed_tools=allowed,
                                                          unload_enabled=unload, script_execution_enabled=scripts)
        search = (f"\nIf the locally available skills are not sufficient to complete your task, you can use the"
                  f" `{p}search_skills` tool to discover additional skills from the registry.")
        return {guidance: "<GUIDANCE>", search: "<SEARCH>", module._BINARY_FILE_DETECTED_MSG: "<BINARY>",
                "The content of binary file 'assets/logo.png' is:": "<BYTES>"}
    from adk_actors.skills._instruction import build_skill_system_instruction
    from adk_actors.tools._skill_tools import BINARY_FILE_STATUS
    guidance = build_skill_system_instruction(prefix=prefix, allowed_tools=allowed, unload_enabled=unload,
                                              script_execution_enabled=scripts)
    search = f"\nWhen the skills you have do not cover the task, `{p}search_skills` finds more in the skill registry."
    return {guidance: "<GUIDANCE>", search: "<SEARCH>", BINARY_FILE_STATUS: "<BINARY>",
            "The skill file 'assets/logo.png' follows:": "<BYTES>"}


def _marked(value: Any, texts: dict[str, str]) -> Any:
    """``value`` with each side's own prose replaced by its marker: the texts given, an
    ``error`` value of a response, a ``lifecycle_notice`` or ``detail``; and the
    invocation id a lifecycle record holds (random on both sides)."""
    if isinstance(value, dict):
        if set(value) == {"inlineData"}:  # google-adk's wire form differs: url-safe base64, mime_type
            blob = value["inlineData"]
            data = base64.urlsafe_b64decode(blob["data"].replace("+", "-").replace("/", "_"))
            return {"inlineData": {"data": data.hex(), "mimeType": blob.get("mimeType") or blob.get("mime_type")}}
        marked = {k: _marked(v, texts) for k, v in value.items()}
        if isinstance(marked.get("error"), str) and "error_code" in marked:
            marked["error"] = "<ERROR>"
        for key in ("lifecycle_notice", "detail", "activated_in"):  # prose; a random id
            if isinstance(marked.get(key), str) and marked[key]:
                marked[key] = f"<{key.upper()}>"
        return marked
    if isinstance(value, list | tuple):
        return [_marked(v, texts) for v in value]
    if isinstance(value, str):
        for text, marker in texts.items():
            value = value.replace(text, marker)
        return value
    return value


def _undescribed(schema: Any) -> Any:
    """A tool's declaration (or a part of its schema) with each ``description`` a marker."""
    if isinstance(schema, dict):
        return {k: ("<DESCRIPTION>" if k == "description" and isinstance(v, str) and v else _undescribed(v))
                for k, v in schema.items()}
    if isinstance(schema, list):
        return [_undescribed(v) for v in schema]
    return schema


def _run(source: str, server: StubServer, folder: pathlib.Path, texts: dict[str, str],
         script: list[Any] = SCRIPT, turns: tuple[str, ...] = ("Fill in my W-9.",)) -> dict[str, Any]:
    _, (events, finals, state) = run_program(source, script, server, list(turns), folder)
    requests = request_rows(server)
    for row, request in zip(requests, server.requests, strict=True):  # the whole instruction, less the identity
        text = "".join(p.get("text", "") for p in request.body["systemInstruction"]["parts"])
        row["instruction"] = "\n\n".join(p for p in text.split("\n\n") if not p.startswith("You are "))
        row["tools"] = _undescribed(row["tools"])
    return {"events": _marked(event_rows(events), texts), "finals": finals,
            "state": _marked(state, {}), "requests": _marked(requests, texts),
            "raw_requests": requests, "unused": len(server.responses)}


def test_an_agent_with_a_skill_toolset_sees_and_gets_what_google_adks_does(
        gemini: StubServer, skill_dir: pathlib.Path) -> None:
    theirs = _run(PROGRAM, gemini, skill_dir, _side_texts("theirs"))
    assert theirs["unused"] == 0 and theirs["finals"] == ["The W-9 is filled in."]
    ours = _run(rewritten(PROGRAM), gemini, skill_dir, _side_texts("ours"))
    assert ours["unused"] == 0

    assert ours["events"] == theirs["events"]
    assert ours["finals"] == theirs["finals"]
    assert ours["state"] == theirs["state"]
    assert ours["requests"] == theirs["requests"]

    # what the comparison relies on: each side's guidance is in every request, the
    # responses are the ones expected, and the dynamic tool comes after load_skill
    for request in ours["requests"]:
        assert request["instruction"] == "Help with forms.\n\n<GUIDANCE>"
    responses = {i: row["responses"][0][2] for i, row in enumerate(ours["events"]) if row["responses"]}
    answers = list(responses.values())
    assert answers[0]["result"].startswith("<available_skills>\n<skill>\n<name>\npdf-helper")
    assert answers[1]["skill_name"] == "pdf-helper" and answers[1]["instructions"].startswith("# Filling")
    assert answers[1]["frontmatter"]["allowed_tools"] == "read_file"
    assert answers[2] == {"skill_name": "pdf-helper", "file_path": "references/guide.md",
                          "content": "Each field is one line.\n"}
    assert answers[3] == {"skill_name": "pdf-helper", "file_path": "assets/logo.png", "status": "<BINARY>"}
    assert answers[4] == {"skill_name": "pdf-helper", "file_path": "scripts/fields.py", "status": "success",
                          "stdout": "argv: ['--form', 'w9', '--', 'draft']\nfields: name, date\n", "stderr": ""}
    assert answers[5] == {"skill_name": "pdf-helper", "file_path": "greet.sh", "status": "warning",
                          "stdout": "hello ann\n", "stderr": "careful\n"}
    assert answers[6] == {"stamped": "w9"}
    assert answers[7] == {"error": "<ERROR>", "error_code": "RESOURCE_NOT_FOUND"}
    assert answers[8] == {"error": "<ERROR>", "error_code": "UNSUPPORTED_SCRIPT_TYPE"}
    assert answers[9] == {"error": "<ERROR>", "error_code": "SCRIPT_NOT_FOUND"}
    assert answers[10] == {"error": "<ERROR>", "error_code": "SCRIPT_NOT_FOUND_FATAL"}
    assert answers[11] == {"error": "<ERROR>", "error_code": "SKILL_NOT_FOUND"}
    tools = [[t["name"] for t in request["tools"]] for request in ours["requests"]]
    assert tools[0] == ["list_skills", "load_skill", "load_skill_resource", "run_skill_script"]
    assert tools[2] == [*tools[0], "stamp_pdf"]
    after_binary = ours["raw_requests"][4]["contents"][-1]
    assert after_binary["role"] == "user" and after_binary["parts"][1]["inlineData"]["mimeType"] == "image/png"
    assert ours["state"] == {"_adk_activated_skill_forms": ["pdf-helper"]}


REGISTRY_PROGRAM = '''
from google.adk.agents import Agent
from google.adk.code_executors import UnsafeLocalCodeExecutor
from google.adk.runners import InMemoryRunner
from google.adk.skills import Frontmatter, Resources, Script, Skill, SkillRegistry, load_skill_from_dir
from google.adk.tools.skill_toolset import (SkillDiscoveryMode, SkillLifecycleConfig, SkillLifecycleMode,
                                            SkillToolset)
from google.genai import types

MAKE = "import os\\nos.makedirs('out', exist_ok=True)\\nopen('out/report.csv', 'w').write('a,b\\\\n1,2\\\\n')\\nprint('made')\\n"

class Shelf(SkillRegistry):
    async def get_skill(self, *, name):
        if name != "csv-tools":
            raise LookupError(f"no {name}")
        return Skill(frontmatter=Frontmatter(name="csv-tools", description="Makes CSV files.",
                                             metadata={"adk_inject_state": True}),
                     instructions="Make the CSV for {customer} ({region?}) with scripts/make.py.",
                     resources=Resources(scripts={"make.py": Script(src=MAKE)}))

    async def search_skills(self, *, query):
        return [Frontmatter(name="csv-tools", description="Makes CSV files."),
                Frontmatter(name="pdf-helper", description="A registry copy, shadowed by the local one.")]

async def main(turns, folder):
    toolset = SkillToolset(
        skills=[load_skill_from_dir(folder)], registry=Shelf(), code_executor=UnsafeLocalCodeExecutor(),
        save_output_artifacts=True, tool_name_prefix="sk", discovery_mode=SkillDiscoveryMode.EAGER,
        lifecycle_config=SkillLifecycleConfig(skill_overrides={"csv-tools": SkillLifecycleMode.EPHEMERAL}))
    agent = Agent(name="clerk", model="gemini-2.5-flash", instruction="Make reports.", tools=[toolset])
    runner = InMemoryRunner(agent=agent, app_name="clerk_app")
    session = await runner.session_service.create_session(app_name="clerk_app", user_id="jo",
                                                          state={"customer": "Acme"})
    seen, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="jo", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="clerk_app", user_id="jo", session_id=session.id)
    report = await runner.artifact_service.load_artifact(app_name="clerk_app", user_id="jo", session_id=session.id,
                                                         filename="out/report.csv")
    await runner.close()
    return seen, finals, dict(stored.state, report=report.inline_data.data.decode() if report else None)
'''

REGISTRY_SCRIPT = [
    calls(("sk_search_skills", {"query": "csv"})),
    calls(("sk_load_skill", {"skill_name": "csv-tools"})),
    calls(("sk_run_skill_script", {"skill_name": "csv-tools", "file_path": "scripts/make.py"})),
    calls(("sk_unload_skill", {"skill_name": "pdf-helper"})),
    calls(("sk_load_skill", {"skill_name": "pdf-helper"})),
    calls(("sk_unload_skill", {"skill_name": "pdf-helper"})),
    calls(("sk_load_skill", {"skill_name": "missing-skill"})),
    gemini_response(text="Report made."),
    gemini_response(text="Nothing loaded now."),
]


def test_registry_eager_catalog_prefix_lifecycle_and_artifacts_as_on_google_adk(
        gemini: StubServer, skill_dir: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADK_ENABLE_SKILL_LIFECYCLE", "1")
    allowed = {"load_skill", "load_skill_resource", "run_skill_script", "search_skills", "unload_skill"}
    turns = ("Make the report.", "And now?")
    theirs = _run(REGISTRY_PROGRAM, gemini, skill_dir, _side_texts("theirs", allowed, "sk", unload=True),
                  REGISTRY_SCRIPT, turns)
    assert theirs["unused"] == 0 and theirs["finals"] == ["Report made.", "Nothing loaded now."]
    ours = _run(rewritten(REGISTRY_PROGRAM), gemini, skill_dir, _side_texts("ours", allowed, "sk", unload=True),
                REGISTRY_SCRIPT, turns)
    assert ours["unused"] == 0

    assert ours["events"] == theirs["events"]
    assert ours["finals"] == theirs["finals"]
    assert ours["state"] == theirs["state"]
    assert ours["requests"] == theirs["requests"]

    catalog = ("<available_skills>\n<skill>\n<name>\npdf-helper\n</name>\n<description>\n"
               "Fills PDF forms &amp; reads &lt;fields&gt;.\n</description>\n</skill>\n</available_skills>")
    for request in ours["requests"]:
        assert request["instruction"] == f"Make reports.\n\n<GUIDANCE>\n\n{catalog}\n\n<SEARCH>"
        assert [t["name"] for t in request["tools"]][:5] == [
            "sk_load_skill", "sk_load_skill_resource", "sk_run_skill_script", "sk_search_skills", "sk_unload_skill"]
    answers = [row["responses"][0][2] for row in ours["events"] if row["responses"]]
    assert answers[0] == {"result": [{"name": "csv-tools", "description": "Makes CSV files.", "license": None,
                                      "compatibility": None, "allowed_tools": None, "metadata": {}}]}
    assert answers[1]["lifecycle_notice"] == "<LIFECYCLE_NOTICE>"
    assert answers[1]["instructions"] == "Make the CSV for Acme () with scripts/make.py."
    assert answers[2] == {"skill_name": "csv-tools", "file_path": "scripts/make.py", "stdout": "made\n",
                          "stderr": "", "status": "success", "saved_artifacts": ["out/report.csv"]}
    assert answers[3] == {"error": "<ERROR>", "error_code": "SKILL_NOT_ACTIVE"}
    assert answers[5] == {"skill_name": "pdf-helper", "unloaded": True, "active_skills": ["csv-tools"]}
    assert answers[6] == {"error": "<ERROR>", "error_code": "REGISTRY_ERROR"}
    assert ours["state"]["report"] == "a,b\n1,2\n"
    # the next turn: both loads answered by a notice (one unloaded, one ephemeral and expired)
    pruned = [part["functionResponse"]["response"] for content in ours["requests"][-1]["contents"]
              for part in content["parts"] if part.get("functionResponse", {}).get("name") == "sk_load_skill"]
    assert pruned[:2] == [{"skill_name": "csv-tools", "status": "unloaded", "detail": "<DETAIL>"},
                          {"skill_name": "pdf-helper", "status": "unloaded", "detail": "<DETAIL>"}]


def test_without_a_code_executor_no_script_tool_is_offered_as_on_google_adk(
        gemini: StubServer, skill_dir: pathlib.Path) -> None:
    source = PROGRAM.replace(", code_executor=UnsafeLocalCodeExecutor()", "")
    script = [calls(("list_skills", {})), gemini_response(text="One skill.")]
    theirs = _run(source, gemini, skill_dir, _side_texts("theirs", scripts=False), script)
    ours = _run(rewritten(source), gemini, skill_dir, _side_texts("ours", scripts=False), script)
    assert theirs["unused"] == ours["unused"] == 0
    assert ours["events"] == theirs["events"] and ours["requests"] == theirs["requests"]
    assert ours["requests"][0]["instruction"] == "Help with forms.\n\n<GUIDANCE>"
    assert [t["name"] for t in ours["requests"][0]["tools"]] == ["list_skills", "load_skill", "load_skill_resource"]


@pytest.mark.parametrize("switch", ["", "ADK_ENABLE_SNAKE_CASE_SKILL_NAME"])
def test_a_snake_case_name_takes_google_adks_switch(switch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.skills import Frontmatter as Theirs

    from adk_actors.skills import Frontmatter as Ours

    if switch:
        monkeypatch.setenv(switch, "true")
    for name in ("pdf_helper", "pdf-helper", "pdf_helper-x", "_pdf", "PDF"):
        outcomes = []
        for model in (Theirs, Ours):
            try:
                outcomes.append(model(name=name, description="d").name)
            except ValidationError as exc:
                outcomes.append(type(exc).__name__)
        assert outcomes[0] == outcomes[1], (name, switch)
    assert Ours(name="\uff50df", description="d").name == "pdf"  # NFKC, as google-adk normalises


# -- ours only ---------------------------------------------------------------------------------


def test_a_script_runs_in_the_sandboxed_executors_child_process(skill_dir: pathlib.Path) -> None:
    from adk_actors.agents import LlmAgent
    from adk_actors.code_executors import SandboxedCodeExecutor
    from adk_actors.skills import load_skill_from_dir
    from adk_actors.tools._base import ToolContext
    from adk_actors.tools.skill_toolset import SkillToolset

    (skill_dir / "scripts" / "whoami.py").write_text("import os\nprint(os.getpid())\n")
    toolset = SkillToolset([load_skill_from_dir(skill_dir)], code_executor=SandboxedCodeExecutor())
    agent = LlmAgent(name="forms", model="gemini-2.5-flash")

    class Invocation:
        invocation_id = "inv-1"
        session = type("S", (), {"state": {}, "user_id": "u", "app_name": "a", "id": "s"})()

    Invocation.agent = agent  # type: ignore[attr-defined]
    context = ToolContext(Invocation(), "call-1")  # type: ignore[arg-type]
    tool = next(t for t in toolset._tools if t.name == "run_skill_script")
    answer = asyncio.run(tool.run_async(args={"skill_name": "pdf-helper", "file_path": "scripts/whoami.py"},
                                        tool_context=context))
    assert answer["status"] == "success", answer
    assert int(answer["stdout"]) != os.getpid()
    no_executor = SkillToolset([load_skill_from_dir(skill_dir)])
    names = [t.name for t in asyncio.run(no_executor.get_tools(context))]
    assert "run_skill_script" not in names
    missing = asyncio.run(no_executor._tools[-1].run_async(
        args={"skill_name": "pdf-helper", "file_path": "scripts/whoami.py"}, tool_context=context))
    assert missing["error_code"] == "NO_CODE_EXECUTOR"
