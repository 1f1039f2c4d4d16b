"""``adk-actors``: serve a host, talk to it, look inside it, break it on purpose.

Commands (each talks to a running host on ``--port``, default from the config):

* ``serve [--config FILE]``: start the host and run until SIGTERM / SIGINT; stop
  gracefully (runs in flight are told they were interrupted, the tree stops in
  reverse order, no process is left). A busy port fails at once.
* ``web AGENTS_DIR`` (or ``serve AGENTS_DIR``), ``api_server AGENTS_DIR``: serve every
  agent folder of AGENTS_DIR (google-adk's layout) on embedded defaults (SQLite and the
  log in ``AGENTS_DIR/.adk-actors/``; the HTTP API on ``--host``/``--port``, default
  127.0.0.1:8000); an edited agent reloads, and one that does not import is reported
  here and over HTTP while its last good version serves.
* ``run APP MESSAGE [--user U] [--session S]``: one turn, streamed; a tool call that
  waits for a human's approval is announced with its approval id and the commands
  that approve or deny it, a workflow node's question (``RequestInput``) with its
  message, payload, schema and the ``inputs answer`` command that answers it; exit 1
  when the run ends with an error event. The default
  user (``run``, ``chat``, ``sessions``, ``resume``, ``jobs enqueue``) is ``user``, as
  in the console and google-adk's ``adk web``.
* ``run AGENT_DIR [QUERY]`` (a folder, and no ``--url`` / ``--port``): google-adk's
  ``adk run``, in this process with no host: a REPL on standard input, or one turn
  of QUERY; ``--replay``, ``--resume``, ``--save_session`` ... (``_repl``).
  ``create NAME``: google-adk's ``adk create``, an agent folder that runs offline
  until its model's key is set (``_create``).
* ``eval APP|AGENT_DIR EVAL_SET[:CASE,...]...``: eval sets run and scored, a line per
  case, a summary per set, exit 1 if a case did not pass; on an app of the host, or
  (an AGENT_DIR) google-adk's ``adk eval`` in this process (``evals._folder``), each
  set's results saved as google-adk saves them, in ``AGENT_DIR/.adk/eval_history/``
  (listed by ``web DIR`` on ``/dev/apps/APP/eval_results``, and by google-adk's ``adk web``).
* ``chat APP``: turns from standard input until EOF.
  Both talk to the host's actor system on ``--port``, or to its HTTP API with
  ``--url URL [--token T]`` (a host elsewhere, or behind bearer tokens).
* ``status``: the live supervision tree (id, type, state, pid, restarts), then a line:
  every actor serves, or what does not (restarting, gone, a partition's run workers
  not all connected).
* ``chaos soak``: sessions talk while random actors are killed; prints LOST, HUNG,
  restarts, restored, next turns valid, orphans (exit 1 unless all is well); its
  progress goes to standard error every few seconds.
* ``chaos kill TARGET | --random``: kill -9 an actor (``registry``,
  ``sessions/sessions-0``, ``run_pools/pool-0/worker-PID`` ...) and say it is back
  once it runs in a new process and every actor of the host serves again, those its
  supervisor restarted with it included (a run worker: replaced by its pool; a job
  executor: gone); not so within 30 s (scaled to the load), exit 1 naming what is not
  back; a session (``sessions/sessions-0/APP/USER/SESSION``) is crashed, a run (its
  path, or its id) killed alone.
* ``sessions list|show|delete|reset APP [SESSION]``: ``reset`` lets a failed session
  (crashed beyond its restart intensity) serve again.
* ``approvals list|approve|deny APP [ID]``: the human side of tool approvals.
* ``inputs list|answer APP [ID ANSWER] [--session S]``: the human side of workflow
  nodes' questions (``RequestInput``): ``run`` announces one with the command that
  answers it; ``answer`` sends the answer and prints the graph's next events.
* ``resume APP SESSION RUN_ID [--rerun CALL] [--result CALL=JSON] [--end CALL]``:
  continue a run that a crash (or a failure) ended from its last committed step; a
  run that stops before calls that may have run lists them and exits 3: decide on
  each and resume the run it names.
* ``mcp [--user U]``: the host's apps as MCP tools on stdin/stdout, for an MCP
  client that starts it (Claude Desktop, an IDE, google-adk's McpToolset); the
  sessions are user U's (default ``mcp``). Needs the ``mcp`` extra.

``--json`` prints JSON lines for scripts; colours only on a terminal. Exit codes:
0 success, 1 failure, 2 bad usage or configuration, 3 a resumed run needs decisions.
"""

from __future__ import annotations

from ._common import DEFAULT_USER
from ._main import build_parser, main

__all__ = ["DEFAULT_USER", "build_parser", "main"]
