"""Which writes in an agents folder make ``web DIR`` reload an app (issue 54): its code
(``.py``, ``.yaml``, ``.yml``) and its ``.env``, as google-adk's reloader; not an eval
set or an eval result that ``eval AGENT_DIR`` saves into ``.adk/eval_history`` (each
save printed "reloaded app ..." before)."""

from __future__ import annotations

from pathlib import Path

from adk_actors.engine import AppCatalog
from adk_actors.runtime._agent_folders import AgentFolderWatcher


def _watcher(tmp_path: Path) -> AgentFolderWatcher:
    for name in ("dice", "shop"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("from . import agent\n")
    return AgentFolderWatcher(AppCatalog(agents_dir=str(tmp_path)), lambda line, error: None)


def test_code_and_env_changes_reload_their_app(tmp_path: Path) -> None:
    watcher = _watcher(tmp_path)
    for changed in ("dice/agent.py", "dice/tools/helpers.py", "dice/root_agent.yaml", "dice/sub.yml", "dice/.env"):
        assert watcher._names({str(tmp_path / changed)}) == {"dice"}, changed
    assert watcher._names({str(tmp_path / ".env")}) == {"dice", "shop"}


def test_eval_files_and_hidden_or_cache_folders_reload_nothing(tmp_path: Path) -> None:
    watcher = _watcher(tmp_path)
    for changed in ("dice/rolls.evalset.json", "dice/.adk/eval_history/dice_rolls_1.5.evalset_result.json",
                    "dice/__pycache__/agent.cpython-311.pyc", "dice/.adk/session.py", "dice/notes.txt",
                    ".adk-actors/data/sessions.db", "README.md"):
        assert watcher._names({str(tmp_path / changed)}) == set(), changed
