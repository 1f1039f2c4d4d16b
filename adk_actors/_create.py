"""``adk-actors create NAME``: google-adk's ``adk create``, an agent folder to start from.

What :func:`create_agent_folder` does, in order:

1. ``NAME``'s last part must be a Python identifier (the folder is imported by that
   name); a folder that exists and is not empty is overwritten only if the user says
   ``y`` (google-adk's question); otherwise nothing is written (a ConfigError, exit 2).
2. The model: ``--model``, else asked (google-adk's choices). The key: ``--api_key``,
   else (for a Gemini model with no ``--project``/``--region``) asked, an empty answer
   meaning none for now. A question that standard input cannot answer (it ended) is a
   :class:`ConfigError` naming the flag to give.
3. It writes ``NAME/.env`` (the key under the variable the model reads:
   ``GOOGLE_API_KEY`` for Gemini, ``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``; the
   Google Cloud project and region as google-adk writes them; with no key, the line
   to fill in, commented), ``NAME/.gitignore`` (``.env``, ``.adk/``, ``.adk-actors/``),
   and either ``__init__.py`` + ``agent.py`` (``--type code``, the default) or
   ``root_agent.yaml`` (``--type config``).
4. It says what it wrote and how to run it (``adk-actors run NAME``, ``adk-actors web
   DIR``).

The generated ``agent.py`` runs out of the box: while the model's key variable is
unset (``.env`` is read before the agent is imported), its ``root_agent`` answers with
the offline :class:`~adk_actors.models.ScriptedModel`, and every answer says so and
names the variable to set; once set, the named model answers (a served host picks the
edited ``.env`` up at the next turn). A ``root_agent.yaml`` has no such fallback: with
no key, its turns fail with an error naming the variable.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from ._exceptions import ConfigError

__all__ = ["MODEL_CHOICES", "add_create_flags", "create_agent_folder", "key_variables", "run_create"]

#: google-adk 2.13's choices when ``--model`` is not given; the last is filled in later.
MODEL_CHOICES = ("gemini-3.5-flash", "gemini-3.8-flash")
FILL_IN = "<FILL_IN_MODEL>"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_IGNORED = (".env", ".adk/", ".adk-actors/")

_INIT = "from . import agent as agent\n"

_AGENT = '''"""{name}: made by `adk-actors create`. Run it: `adk-actors run {name}`."""

import os

from adk_actors.agents import LlmAgent
from adk_actors.models import ScriptedModel

MODEL = {model!r}
#: The variables MODEL's key is read from (.env is read before this file).
KEYS = {keys!r}


def offline(request):
    """The offline scripted model's answer, while none of KEYS is set."""
    asked = next((p.text for c in reversed(request.contents) if c.role == "user" for p in c.parts if p.text), "")
    if not KEYS:
        return f"(offline: set MODEL in {name}/agent.py, then its key in {name}/.env) You said: {{asked}}"
    return (f"(offline: {{' or '.join(KEYS)}} is not set, so the scripted model answers; set it in "
            f"{name}/.env for {{MODEL}}) You said: {{asked}}")


root_agent = LlmAgent(
    model=MODEL if KEYS and any(os.environ.get(key) for key in KEYS) else ScriptedModel(fallback=offline),
    name="root_agent",
    description="A helpful assistant for user questions.",
    instruction="Answer user questions to the best of your knowledge",
)
'''

_CONFIG = """name: root_agent
description: A helpful assistant for user questions.
instruction: Answer user questions to the best of your knowledge
model: {model}
"""


def key_variables(model: str) -> tuple[str, ...]:
    """The environment variables that hold ``model``'s key (the model registry's):
    empty for a model this kit has no provider for (``<FILL_IN_MODEL>``)."""
    if model.startswith(("gemini-", "models/gemini-")):
        return ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    if model.startswith("claude-"):
        return ("ANTHROPIC_API_KEY",)
    if model.startswith("openai/"):
        return ("OPENAI_API_KEY", "OPENAI_BASE_URL")
    return ()


def _ask(question: str, flag: str) -> str:
    """The user's answer to ``question`` on standard input; ConfigError naming ``flag``
    when standard input has ended."""
    try:
        return input(question).strip()
    except EOFError:
        print()
        raise ConfigError(f"create: no answer on standard input; give {flag}") from None


def _model() -> str:
    choices = "".join(f"{i}. {m}\n" for i, m in enumerate(MODEL_CHOICES, 1))
    while True:
        answer = _ask(f"Choose a model for the root agent:\n{choices}{len(MODEL_CHOICES) + 1}. Other models "
                      "(fill later)\nChoose model: ", "--model")
        if answer in {str(i) for i in range(1, len(MODEL_CHOICES) + 1)}:
            return MODEL_CHOICES[int(answer) - 1]
        if answer == str(len(MODEL_CHOICES) + 1):
            print("Set MODEL in agent.py later (gemini-*, claude-*, openai/<model>); docs/models.md lists them.")
            return FILL_IN


def _env_lines(model: str, api_key: str | None, project: str | None, region: str | None) -> list[str]:
    lines = []
    if project and region:
        lines.append("GOOGLE_GENAI_USE_ENTERPRISE=1")
    elif api_key and model.startswith("gemini"):
        lines.append("GOOGLE_GENAI_USE_ENTERPRISE=0")
    keys = key_variables(model)
    variable = "GOOGLE_API_KEY" if not keys or keys[0] == "GEMINI_API_KEY" else keys[0]
    lines.append(f"{variable}={api_key}" if api_key else f"# {variable}=  (the model's key; until it is set, "
                                                        "agent.py answers with the offline scripted model)")
    if project:
        lines.append(f"GOOGLE_CLOUD_PROJECT={project}")
    if region:
        lines.append(f"GOOGLE_CLOUD_LOCATION={region}")
    return lines


def _gitignore(folder: Path) -> None:
    path = folder / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    missing = [entry for entry in _IGNORED if entry not in text.splitlines()]
    if missing:
        path.write_text(text + ("\n" if text and not text.endswith("\n") else "") + "".join(f"{e}\n" for e in missing),
                        encoding="utf-8")


def create_agent_folder(name: str, *, model: str | None = None, api_key: str | None = None,
                        project: str | None = None, region: str | None = None, kind: str = "code") -> Path:
    """Make agent folder ``name`` (relative to the working directory) as the module
    says and return it. ConfigError, nothing written, for a bad name, an unanswered
    question or a refusal to overwrite."""
    folder = Path(os.getcwd()) / name
    if not _IDENTIFIER.fullmatch(folder.name) or folder.name == "user":
        raise ConfigError(f"create {name}: an agent folder's name must be a Python identifier (letters, digits and "
                          "'_', not starting with a digit; not 'user'): it is imported by that name")
    if kind not in ("code", "config"):
        raise ConfigError(f"create --type {kind!r}: code or config")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        answer = _ask(f"Non-empty folder already exist: '{folder}'\nOverride existing content? [y/N]: ",
                      "an empty or new folder")
        if answer.lower() not in ("y", "yes"):
            raise ConfigError(f"create {name}: {folder} is not empty; nothing written")
    if not model:
        model = _model()
    if not api_key and not (project and region) and model.startswith("gemini"):
        api_key = _ask("Enter Google API key (empty: none for now, the offline scripted model answers): ",
                       "--api_key") or None
    folder.mkdir(parents=True, exist_ok=True)
    env = folder / ".env"
    env.write_text("\n".join(_env_lines(model, api_key, project, region)) + "\n", encoding="utf-8")
    env.chmod(0o600)  # it may hold a key
    _gitignore(folder)
    if kind == "config":
        (folder / "root_agent.yaml").write_text(_CONFIG.format(model=model), encoding="utf-8")
        written = [".env", ".gitignore", "root_agent.yaml"]
    else:
        (folder / "__init__.py").write_text(_INIT, encoding="utf-8")
        (folder / "agent.py").write_text(_AGENT.format(name=folder.name, model=model, keys=key_variables(model)),
                                         encoding="utf-8")
        written = [".env", ".gitignore", "__init__.py", "agent.py"]
    print(f"\nAgent created in {folder}:\n" + "".join(f"- {f}\n" for f in written))
    keys = key_variables(model)
    if project and region and not api_key:
        print("Note: this kit calls Gemini with an API key, not through Vertex AI: set GEMINI_API_KEY or "
              "GOOGLE_API_KEY in .env.")
    if api_key:
        print("WARNING: the API key is stored in .env (kept out of git by .gitignore).")
    elif kind == "code":
        print(f"No key yet: the agent answers with the offline scripted model until {' or '.join(keys) or 'a key'} "
              f"is set in {name}/.env{'' if keys else ' and MODEL in agent.py'}.")
    else:
        print(f"No key yet: its turns fail, naming the variable, until {' or '.join(keys) or 'a key'} is set in "
              f"{name}/.env.")
    parent = os.path.dirname(os.path.normpath(name)) or "."
    print(f"Next steps:\n- Chat with your agent in the terminal: adk-actors run {name}\n"
          f"- Or in the browser: adk-actors web {parent}")
    return folder


def add_create_flags(parser: argparse.ArgumentParser) -> None:
    """google-adk's ``adk create`` arguments."""
    parser.add_argument("name", metavar="APP_NAME", help="the agent folder to make (its last part is the app's name)")
    parser.add_argument("--model", help="the root agent's model (default: asked)")
    parser.add_argument("--api_key", help="the model's API key, written to .env (default: asked for Gemini)")
    parser.add_argument("--project", help="a Google Cloud project, written to .env")
    parser.add_argument("--region", help="a Google Cloud region, written to .env")
    parser.add_argument("--type", dest="kind", type=str.lower, choices=["code", "config"], default="code",
                        help="agent.py (code, the default) or root_agent.yaml (config)")


def run_create(args: argparse.Namespace) -> int:
    """``adk-actors create``: :func:`create_agent_folder` with the parsed flags; 0."""
    create_agent_folder(args.name, model=args.model, api_key=args.api_key, project=args.project, region=args.region,
                        kind=args.kind)
    return 0
