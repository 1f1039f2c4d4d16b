"""The guidance a ``SkillToolset`` adds to the system instruction, and its tools'
names. Our own words; what it covers follows google-adk 2.13's: what a skill folder
holds, that a relevant skill is loaded before acting, what each tool is for, to stop
on a failed resource or script lookup, that loading a skill does not end the turn, and
(when asked) unloading, the folder of an execution environment, and which skill tools
a filter took away."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "DEFAULT_SKILL_SYSTEM_INSTRUCTION",
    "LIST_SKILLS",
    "LOAD_SKILL",
    "LOAD_SKILL_RESOURCE",
    "RUN_SKILL_SCRIPT",
    "SEARCH_SKILLS",
    "UNLOAD_SKILL",
    "build_skill_system_instruction",
]

LIST_SKILLS = "list_skills"
SEARCH_SKILLS = "search_skills"
LOAD_SKILL = "load_skill"
UNLOAD_SKILL = "unload_skill"
LOAD_SKILL_RESOURCE = "load_skill_resource"
RUN_SKILL_SCRIPT = "run_skill_script"


def _steps(p: str, scripts: bool, unload: bool, folder: str | None) -> list[str]:
    """The numbered rules, in order, for tool names prefixed by ``p``."""
    steps = [
        f"When a skill looks relevant to what the user asks, first call `{p}{LOAD_SKILL}` with"
        ' `skill_name="<SKILL_NAME>"` and read its instructions; do not act on the task before that.',
        "Then carry out those instructions as written, every step in the order given, before you"
        " answer the user.",
        f"`{p}{LOAD_SKILL_RESOURCE}` reads a file that belongs to a skill (`references/...`,"
        " `assets/...`, `scripts/...`). Use it for skill files only, never for files or documents"
        " the user gives you, and do not read skill files with any other tool.",
    ]
    if scripts:
        steps.append(f"`{p}{RUN_SKILL_SCRIPT}` runs a script from a skill's `scripts/` folder; you may"
                     f" read the script first with `{p}{LOAD_SKILL_RESOURCE}`.")
    steps.append(f"When `{p}{LOAD_SKILL_RESOURCE}` answers with an error, do not try that path or any"
                 " other again: tell the user what failed and stop.")
    if scripts:
        steps.append(f"When `{p}{RUN_SKILL_SCRIPT}` answers with an error (such as `SCRIPT_NOT_FOUND`),"
                     " do not run the script again or guess another script's path: tell the user what"
                     " failed and stop.")
    steps.append(f"Loading a skill only gives you its instructions; your turn goes on. After"
                 f" `{p}{LOAD_SKILL}` returns, keep going in the same turn: call the tools the skill's"
                 " steps need, then write your answer. Do not end the turn with an empty reply after"
                 " loading a skill.")
    if unload:
        steps.append(f"When you are done with a skill's task and need neither its instructions nor its"
                     f" tools any more, you may call `{p}{UNLOAD_SKILL}` with"
                     ' `skill_name="<SKILL_NAME>"`. Its tools go away with it, and you would have to'
                     f" call `{p}{LOAD_SKILL}` again to have them back; unload a skill only when"
                     " you are done with it, never merely because it is loaded.")
    if scripts and folder is not None:
        steps.append(f"About the execution environment: when you call `{p}{RUN_SKILL_SCRIPT}` with"
                     " a `command`, every file of the skill (scripts, assets and the rest) is"
                     f" in the environment under `{folder}/<skill_name>/`; give paths of"
                     f" files and scripts from there (as `{folder}/<skill_name>/scripts/<script_name>`).")
    return steps


def build_skill_system_instruction(*, prefix: str | None = None,
                                   allowed_tools: set[str] | frozenset[str] | None = None,
                                   skills_folder: Path | None = None, script_execution_enabled: bool = True,
                                   unload_enabled: bool = False) -> str:
    """The guidance text, in order: what skills are and what a skill folder holds (the
    ``scripts/`` line says scripts are run, or only read when ``script_execution_enabled``
    is false); the numbered rules (see :func:`_steps`; the script rules only when
    scripts can run, the unload rule only with ``unload_enabled``, the environment note
    only with a ``skills_folder``); then, when ``allowed_tools`` (base tool names) is
    given and leaves out some of the skill tools, a note naming those as unavailable.
    Tool names carry ``prefix`` and ``_`` when a prefix is given."""
    p = f"{prefix}_" if prefix else ""
    folder = skills_folder.as_posix() if skills_folder is not None else None
    scripts_line = (
        "- `scripts/` (optional): programs that can be run.\n\n" if script_execution_enabled else
        f"- `scripts/` (optional): programs that come with the skill. You cannot run them here: read"
        f" one with `{p}{LOAD_SKILL_RESOURCE}` and do what it would do yourself.\n\n")
    text = ("Skills are available to help you with specialised tasks, and you work with them only"
            " through the skill tools.\n\n"
            "A skill is a folder of instructions and files that adds to what you can do. It holds:\n"
            "- `SKILL.md` (always): the skill's name and description, then its instructions in"
            " markdown.\n"
            "- `references/` (optional): more documentation and worked examples.\n"
            "- `assets/` (optional): templates, data and other material the skill uses.\n"
            + scripts_line + "Follow these rules:\n\n"
            + "".join(f"{n}. {step}\n" for n, step in
                      enumerate(_steps(p, script_execution_enabled, unload_enabled, folder), start=1)))
    if allowed_tools is not None:
        names = [RUN_SKILL_SCRIPT, LOAD_SKILL_RESOURCE, LOAD_SKILL, LIST_SKILLS]
        if unload_enabled:
            names.append(UNLOAD_SKILL)
        missing = [f"`{p}{name}`" for name in names if name not in allowed_tools]
        if missing:
            text += (f"\n\nThese tools are not available to you: {', '.join(missing)}. Do not call"
                     " them. Once a skill is loaded (when you can load one), use its instructions"
                     " directly and give your final answer as ordinary text, never inside a tool"
                     " call.\n")
    return text


#: the guidance with every skill tool described (no prefix, no filter, no environment)
DEFAULT_SKILL_SYSTEM_INSTRUCTION = build_skill_system_instruction()
