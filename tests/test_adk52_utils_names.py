"""google-adk's ``google.adk.utils`` names at ``adk_actors.utils`` (issue 52), side by
side with google-adk 2.13: ``inject_session_state`` on the same templates, state
and artifacts gives the same text (or raises the same exception type), and inside
an agent's instruction provider gives the model the same system instruction.
"""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any, ClassVar

import pydantic
import pytest
from google.adk.agents import LlmAgent as TheirAgent
from google.adk.agents.invocation_context import InvocationContext as TheirInvocation
from google.adk.agents.readonly_context import ReadonlyContext as TheirReadonlyContext
from google.adk.artifacts import InMemoryArtifactService as TheirArtifacts
from google.adk.sessions import InMemorySessionService as TheirSessions
from google.adk.utils import instructions_utils as theirs
from google.genai import types as their_types
from google_adk_harness import gemini, rewritten, run_case, stand_in

from adk_actors import types as our_types
from adk_actors.compiler import CompileContext
from adk_actors.testing import StubServer, gemini_response
from adk_actors.utils import instructions_utils as ours

__all__ = ["gemini", "stand_in"]

#: google-adk's session service keeps no ``temp:`` key at creation: ``{temp:...}`` is
#: compared as missing
STATE: dict[str, Any] = {"name": "Ann", "count": 3, "nothing": None, "app:tier": "gold", "user:lang": "fr",
                         "listed": [1, 2]}
ARTIFACTS = {"notes.txt": "remember the milk", "plan.md": "# step one"}


async def _their_text(template: str, state: dict[str, Any], artifacts: dict[str, str], jinja: bool) -> str:
    sessions, store = TheirSessions(), TheirArtifacts()
    session = await sessions.create_session(app_name="app", user_id="u", state=state)
    for name, text in artifacts.items():
        await store.save_artifact(app_name="app", user_id="u", session_id=session.id, filename=name,
                                  artifact=their_types.Part(text=text))
    invocation = TheirInvocation(session_service=sessions, artifact_service=store, invocation_id="i",
                                 agent=TheirAgent(name="helper"), session=session)
    return await theirs.inject_session_state(template, TheirReadonlyContext(invocation), use_jinja2=jinja)


async def _our_text(template: str, state: dict[str, Any], artifacts: dict[str, str], jinja: bool) -> str:
    context = CompileContext(state=state, artifacts={n: our_types.Part(text=t) for n, t in artifacts.items()})
    return await ours.inject_session_state(template, context, use_jinja2=jinja)


def both(template: str, *, state: dict[str, Any] = STATE, artifacts: dict[str, str] = ARTIFACTS,
         jinja: bool = False) -> tuple[Any, Any]:
    """What each side's inject_session_state gives: its text, or its exception's type."""
    results: list[Any] = []
    for side in (_their_text, _our_text):
        try:
            results.append(asyncio.run(side(template, state, artifacts, jinja)))
        except Exception as exc:
            results.append(type(exc))
    return results[0], results[1]


TEMPLATES = [
    "plain text, no placeholders",
    "Hello {name}, you have {count} items.",
    "{ name } and {{name}} and {{{name}}}",
    "optional missing: [{missing?}]",
    "None is empty: [{nothing}]",
    "scoped: {app:tier} {user:lang} [{temp:step?}]",
    "optional scoped missing: [{user:unknown?}]",
    "a list: {listed}",
    "invalid names stay: {a b} {1x} {} {\"json\": 1} {other:name} {app:1x}",
    "escapes stay: \\{name} ${name}",
    "artifact: {artifact.notes.txt} and {artifact.plan.md}",
    "optional artifact missing: [{artifact.gone.txt?}]",
    "state {name} then artifact {artifact.notes.txt} then {missing?}",
]


@pytest.mark.parametrize("template", TEMPLATES)
def test_inject_session_state_gives_google_adks_text(template: str) -> None:
    their, our = both(template)
    assert isinstance(their, str), their
    assert our == their


@pytest.mark.parametrize("template", ["{missing}", "{user:missing}", "{temp:step}", "x {name} {artifact.gone.txt}",
                                      "{artifact.gone.txt} before {missing}"])
def test_a_missing_required_value_raises_as_in_google_adk(template: str) -> None:
    their, our = both(template)
    assert their is KeyError
    assert our is their


def test_an_artifact_placeholder_without_artifacts_raises_as_in_google_adk() -> None:
    """google-adk raises ValueError when the context has no artifact service; ours when
    the context can load none (neither ``load_artifact`` nor given artifacts)."""

    class StateOnly:
        state: ClassVar[dict[str, str]] = {"name": "Ann"}

    with pytest.raises(ValueError):
        asyncio.run(ours.inject_session_state("{artifact.notes.txt}", StateOnly()))
    assert asyncio.run(ours.inject_session_state("{name} {missing?}", StateOnly())) == "Ann "


@pytest.mark.parametrize("template", ["{% if name %}Hello {{ name }}!{% endif %}",
                                      "{{ state['user:lang'] }} / {{ count + 1 }}",
                                      "{{ artifact('notes.txt') }}", "{{ undefined_name }}"])
def test_jinja2_templates_render_as_in_google_adk(template: str) -> None:
    their, our = both(template, jinja=True)
    assert our == their


def test_a_filled_value_is_not_filled_again_by_the_compiler() -> None:
    """A state value holding a placeholder reaches the model as it is, as on google-adk
    (its provider text is not templated a second time)."""
    from adk_actors.compiler._instructions import _filled

    state = {"quote": "say {name}", "name": "Ann"}
    their, our = both("{quote}", state=state)
    assert our == their == "say {name}"
    assert _filled(our, CompileContext(state=state)) == "say {name}"


PROVIDER_CASE = '''
from google.adk.agents import Agent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.runners import InMemoryRunner
from google.adk.utils.instructions_utils import inject_session_state
from google.genai import types

async def build(context: ReadonlyContext) -> str:
    return await inject_session_state(
        "Greet {user:name} in {app:lang}; mood: [{mood?}]; step {temp:step?}; keep {a b} as is.", context)

agent = Agent(name="greeter", model="gemini-2.5-flash", instruction=build)

async def main(turns):
    runner = InMemoryRunner(agent=agent, app_name="greet_app")
    session = await runner.session_service.create_session(
        app_name="greet_app", user_id="ann", state={"user:name": "Ann", "app:lang": "French"})
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="greet_app", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''


def test_inside_an_instruction_provider_the_model_gets_google_adks_instruction(gemini: StubServer) -> None:
    answers = [gemini_response(text="Bonjour Ann")]
    their = run_case(PROVIDER_CASE, answers, ["hello"], gemini)
    assert their["finals"] == ["Bonjour Ann"]
    our = run_case(rewritten(PROVIDER_CASE), answers, ["hello"], gemini)
    assert our["requests"][0]["instruction"] == their["requests"][0]["instruction"]
    assert our["finals"] == their["finals"]


# -- the other helpers, on the same inputs --------------------------------------------

MODEL_NAMES = [None, "", "gemini-2.5-flash", "gemini-1.5-pro", "gemini-1.0", "gemini-3.5-live-translate-preview",
               "models/gemini-2.0-flash", "projects/p/locations/l/publishers/google/models/gemini-1.5-pro-002",
               "apigee/gemini-2.5-flash", "apigee/v1/gemini-2.5-pro", "apigee/vertex_ai/v1/gemini-3.0-pro",
               "gemini/gemini-2.5-flash", "openai/gpt-4o", "claude-3-5-sonnet", "projects/p/models/x",
               "gemini-flash-early-exp", "gemini-early-exp3", "gemini-flash-lite-early-exp2", "gemini-x",
               "gemini-", "gemini-2", "gemini-10.1-ultra", "GEMINI-2.5-flash", "my-gemini-2.5"]


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_model_name_helpers_give_google_adks_values(model: str | None) -> None:
    from google.adk.utils import model_name_utils as their_names

    from adk_actors.utils import model_name_utils as our_names

    if model is not None:
        assert our_names.extract_model_name(model) == their_names.extract_model_name(model)
    for name in ("is_gemini_model", "is_gemini_3_5_live_translate", "is_gemini_1_model",
                 "is_gemini_eap_or_2_or_above"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            assert getattr(our_names, name)(model) == getattr(their_names, name)(model), name


def test_the_version_checks_are_deprecated_as_in_google_adk() -> None:
    from google.adk.utils import model_name_utils as their_names

    from adk_actors.utils import model_name_utils as our_names

    for module in (their_names, our_names):
        for name in ("is_gemini_1_model", "is_gemini_eap_or_2_or_above"):
            with pytest.warns(DeprecationWarning):
                getattr(module, name)("gemini-2.5-flash")


@pytest.mark.parametrize("value", ["", " TRUE ", "1", "yes", "On", "0", "false", "no", "2", None])
def test_env_helpers_read_the_environment_as_google_adk(value: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.utils import env_utils as their_env
    from google.adk.utils import model_name_utils as their_names

    from adk_actors.utils import env_utils as our_env
    from adk_actors.utils import model_name_utils as our_names

    for name in ("FLAG_52", "ADK_DISABLE_GEMINI_MODEL_ID_CHECK", "GOOGLE_GENAI_USE_ENTERPRISE",
                 "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
        if value is not None:
            monkeypatch.setenv(name, value)
    assert our_env.is_env_enabled("FLAG_52") == their_env.is_env_enabled("FLAG_52")
    assert our_env.is_env_enabled("UNSET_52", default="on") == their_env.is_env_enabled("UNSET_52", default="on")
    assert our_names.is_gemini_model_id_check_disabled() == their_names.is_gemini_model_id_check_disabled()
    assert our_env.is_enterprise_mode_enabled() == their_env.is_enterprise_mode_enabled()
    monkeypatch.delenv("GOOGLE_GENAI_USE_ENTERPRISE", raising=False)
    with warnings.catch_warnings(record=True) as their_warnings:
        warnings.simplefilter("always")
        their_mode = their_env.is_enterprise_mode_enabled()
    with warnings.catch_warnings(record=True) as our_warnings:
        warnings.simplefilter("always")
        our_mode = our_env.is_enterprise_mode_enabled()
    assert our_mode == their_mode
    assert [w.category for w in our_warnings] == [w.category for w in their_warnings]


def _contents(types_module: Any) -> list[Any]:
    part = types_module.Part
    blob, file = types_module.Blob, types_module.FileData
    return [
        types_module.Content(role="model", parts=[part(text="a"), part(text="think", thought=True), part(text="b")]),
        types_module.Content(role="user", parts=[part(inline_data=blob(mime_type="audio/pcm", data=b"1")),
                                                 part(text="said"),
                                                 part(file_data=file(mime_type="audio/mp3", file_uri="gs://x")),
                                                 part(inline_data=blob(mime_type="image/png", data=b"2"))]),
        types_module.Content(role="user", parts=[part(inline_data=blob(mime_type="audio/wav", data=b"3"))]),
        types_module.Content(role="user", parts=[]),
        types_module.Content(role="user", parts=[part(text="")]),
    ]


def test_content_helpers_give_google_adks_values() -> None:
    from google.adk.utils import content_utils as their_content

    from adk_actors.utils import content_utils as our_content

    def plain(content: Any) -> Any:
        return None if content is None else content.model_dump(mode="json", exclude_none=True)

    for their, our in zip(_contents(their_types), _contents(our_types), strict=True):
        for splitter in ("", " "):
            assert our_content.extract_text_from_content(our, splitter) == \
                their_content.extract_text_from_content(their, splitter)
        assert plain(our_content.filter_audio_parts(our)) == plain(their_content.filter_audio_parts(their))
        assert [our_content.is_audio_part(p) for p in our.parts] == [their_content.is_audio_part(p) for p in their.parts]
    assert our_content.extract_text_from_content(None) == their_content.extract_text_from_content(None) == ""

    class Answer(pydantic.BaseModel):
        city: str
        count: int

    for value in ["hi", {"city": "Zürich"}, [1, "é"], Answer(city="Oslo", count=2), 42, None]:
        assert plain(our_content.to_user_content(value)) == plain(their_content.to_user_content(value))
    assert plain(our_content.to_user_content(_contents(our_types)[0])) == \
        plain(their_content.to_user_content(_contents(their_types)[0]))


def test_yaml_helpers_read_and_write_as_google_adk(tmp_path: Path) -> None:
    import yaml
    from google.adk.utils import yaml_utils as their_yaml

    from adk_actors.utils import yaml_utils as our_yaml

    class Inner(pydantic.BaseModel):
        tags: list[str] = []

    class Config(pydantic.BaseModel):
        name: str
        note: str | None = None
        instruction: str = ""
        level: int = 1
        inner: Inner = Inner()

    model = Config(name="agent", instruction='Say "hi".\nThen stop.', level=3, inner=Inner(tags=["a", "ü"]))
    for options in ({}, {"sort_keys": False, "indent": 4}, {"exclude_defaults": False, "exclude_none": False},
                    {"exclude": {"instruction"}}):
        theirs_file, ours_file = tmp_path / "theirs" / "a.yaml", tmp_path / "ours" / "deep" / "a.yaml"
        their_yaml.dump_pydantic_to_yaml(model, theirs_file, **options)
        our_yaml.dump_pydantic_to_yaml(model, ours_file, **options)
        assert ours_file.read_text(encoding="utf-8") == theirs_file.read_text(encoding="utf-8")
        assert our_yaml.load_yaml_file(ours_file) == their_yaml.load_yaml_file(str(theirs_file))
    for module in (their_yaml, our_yaml):
        with pytest.raises(FileNotFoundError):
            module.load_yaml_file(tmp_path / "missing.yaml")
        (tmp_path / "bad.yaml").write_text("a: [1, 2\n")
        with pytest.raises(yaml.YAMLError):
            module.load_yaml_file(tmp_path / "bad.yaml")


@pytest.mark.parametrize("form", ["bare", "called", "message"])
def test_feature_decorators_warn_and_block_as_google_adks(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.utils import feature_decorator as their_features

    from adk_actors.utils import feature_decorator as our_features

    monkeypatch.delenv("ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS", raising=False)
    monkeypatch.delenv("ADK_ALLOW_WIP_FEATURES", raising=False)

    def applied(decorator: Any, target: Any) -> Any:
        if form == "bare":
            return decorator(target)
        return decorator()(target) if form == "called" else decorator(f"{form} note {id(target)}")(target)

    def labelled(caught: Any) -> bool:
        # warnings are caught process-wide: a ResourceWarning of a socket another test
        # left to the collector may land in the window; only the decorators' count
        return str(caught.message).startswith(("[EXPERIMENTAL]", "[WIP]"))

    def seen(module: Any) -> list[Any]:
        def tool(x: int) -> int:
            return x + 1

        class Widget:
            def __init__(self, size: int) -> None:
                self.size = size

        marked, kind = applied(module.experimental, tool), applied(module.experimental, Widget)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = [marked(1), marked(2), kind(3).size]
        labels = [(w.category, str(w.message).split(":")[0]) for w in caught if labelled(w)]
        blocked = applied(module.working_in_progress, tool)
        with pytest.raises(RuntimeError, match=r"^\[WIP\] tool: "):
            blocked(1)
        monkeypatch.setenv("ADK_ALLOW_WIP_FEATURES", "true")
        allowed = blocked(5)
        monkeypatch.setenv("ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS", "1")
        with warnings.catch_warnings(record=True) as quiet:
            warnings.simplefilter("always")
            applied(module.experimental, tool)(0)
        monkeypatch.delenv("ADK_ALLOW_WIP_FEATURES")
        monkeypatch.delenv("ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS")
        with pytest.raises(TypeError):
            module.experimental()(42)
        return [results, labels, allowed, len([w for w in quiet if labelled(w)]), marked.__name__, kind.__name__]

    assert seen(our_features) == seen(their_features)


def test_the_package_has_google_adks_public_names() -> None:
    import importlib

    for module in ("content_utils", "env_utils", "feature_decorator", "instructions_utils", "model_name_utils",
                   "yaml_utils"):
        their = importlib.import_module(f"google.adk.utils.{module}")
        our = importlib.import_module(f"adk_actors.utils.{module}")
        public = getattr(their, "__all__", None) or [n for n in vars(their) if not n.startswith("_")
                                                      and getattr(vars(their)[n], "__module__", "") == their.__name__]
        missing = [name for name in public if not hasattr(our, name)]
        assert missing == [], module
