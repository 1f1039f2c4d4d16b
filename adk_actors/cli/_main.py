"""The parser of every command and :func:`main`: a command run, its failures turned
into an exit code and a line on standard error (see the package)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .._create import add_create_flags, run_create
from .._exceptions import (
    AdkError,
    ConfigError,
)
from ._common import DEFAULT_CONFIG, DEFAULT_USER
from ._eval import cmd_eval
from ._ops import cmd_chaos, cmd_mcp, cmd_soak, cmd_status
from ._serve import AGENTS_DIR_HTTP_PORT, cmd_serve
from ._sessions import cmd_approvals, cmd_inputs, cmd_jobs, cmd_resume, cmd_sessions
from ._talk import cmd_chat, cmd_run

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adk-actors", description="Agents on supervised actors.")
    parser.add_argument("--config", help=f"TOML config (default: {DEFAULT_CONFIG} if present)")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--port", type=int, help="the host's port (default: from the config)")
        p.add_argument("--json", action="store_true", help="JSON output for scripts")
        p.add_argument("--config", help=argparse.SUPPRESS, default=argparse.SUPPRESS)
        return p

    for name, what in (("serve", "run the host (and its HTTP API and console) until SIGTERM / SIGINT"),
                       ("web", "serve an agents folder: the HTTP API and the console (serve AGENTS_DIR)"),
                       ("api_server", "serve an agents folder: the HTTP API")):
        serve = sub.add_parser(name, help=what)
        serve.add_argument("agents_dir", nargs="?", metavar="AGENTS_DIR",
                           help="a folder of agents, <name>/agent.py defining root_agent or <name>/root_agent.yaml "
                                "(google-adk's layout), served on embedded defaults (data in AGENTS_DIR/.adk-actors)")
        serve.add_argument("--config", help=argparse.SUPPRESS, default=argparse.SUPPRESS)
        serve.add_argument("--join", metavar="LEADER",
                           help="join the cluster whose leader's actor system is at LEADER "
                                "(<ip>:<port>; [cluster] join)")
        serve.add_argument("--host", dest="http_host", help="the HTTP API's address (default: 127.0.0.1)")
        serve.add_argument("--port", dest="http_port", type=int,
                           help=f"the HTTP API's port (default: {AGENTS_DIR_HTTP_PORT} with AGENTS_DIR, "
                                "else [http] port)")
        serve.add_argument("--admin_port", type=int, help="the actor system's port (default: [host] port, 19470)")
        serve.add_argument("--reload_agents", action="store_true", default=True,
                           help="google-adk's flag, always on here: an edited agent of AGENTS_DIR reloads")
        serve.set_defaults(func=cmd_serve)
    def remote(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--url", help="talk to the host over its HTTP API at this URL instead of its actor system")
        p.add_argument("--token", help="the bearer token for --url (default: $ADK_ACTORS_TOKEN)")
        return p

    run = remote(common(sub.add_parser("run", help="one turn against an app; or AGENT_DIR in this process, "
                                                   "a REPL (google-adk's adk run)")))
    run.add_argument("app", metavar="APP|AGENT_DIR",
                     help="an app of the host; or an agent folder (agent.py or root_agent.yaml), run in this process")
    run.add_argument("message", nargs="?", metavar="MESSAGE",
                     help="the message (an app of a host: needed; an AGENT_DIR: one turn, else the REPL)")
    run.add_argument("--user", default=DEFAULT_USER, help=f"whose session (default: {DEFAULT_USER})")
    run.add_argument("--session")
    folder = run.add_argument_group("with an AGENT_DIR (google-adk's adk run flags)")
    folder.add_argument("--replay", metavar="FILE", help="a JSON file {\"state\": {...}, \"queries\": [...]}: "
                        "a new session with that state answers each query, then the run ends")
    folder.add_argument("--resume", metavar="FILE", help="a session saved by --save_session: shown again, continued")
    folder.add_argument("--save_session", action="store_true", help="at the end, write AGENT_DIR/ID.session.json")
    folder.add_argument("--session_id", help="the saved session's ID (default: asked); with MESSAGE, the session")
    folder.add_argument("--state", help="the new session's state, a JSON object")
    folder.add_argument("--state_file", metavar="FILE", help="the new session's state, a JSON file")
    folder.add_argument("--timeout", help="each turn's deadline: 30s, 5m")
    folder.add_argument("--in_memory", action="store_true", help="keep the sessions in memory only")
    folder.add_argument("--jsonl", action="store_true", help="every event as a JSON line")
    folder.add_argument("--session_service_uri", help="memory://, sqlite://PATH, postgresql://... or a scheme "
                        "AGENT_DIR's services.py / services.yaml registers "
                        "(default: AGENT_DIR/../.adk-actors/run-sessions.db)")
    folder.add_argument("--artifact_service_uri", help="memory://, file:///PATH, gs://BUCKET or a scheme AGENT_DIR's "
                        "services.py / services.yaml registers (an unknown scheme: in memory, with a warning; "
                        "default: in memory)")
    folder.add_argument("--memory_service_uri", help="memory://, sqlite:///PATH, rag://CORPUS, agentengine://ID or a "
                        "scheme AGENT_DIR's services.py / services.yaml registers (default: in memory)")
    run.set_defaults(func=cmd_run)
    create = sub.add_parser("create", help="make an agent folder NAME (google-adk's adk create)")
    add_create_flags(create)
    create.set_defaults(func=run_create)
    chat = remote(common(sub.add_parser("chat", help="turns from standard input")))
    chat.add_argument("app")
    chat.add_argument("--user", default=DEFAULT_USER, help=f"whose session (default: {DEFAULT_USER})")
    chat.add_argument("--session")
    chat.set_defaults(func=cmd_chat)
    evaluate = remote(common(sub.add_parser("eval", help="run eval sets against an app, or on AGENT_DIR in this "
                                                        "process (google-adk's adk eval); exit 1 if a case fails")))
    evaluate.add_argument("app", metavar="APP|AGENT_DIR",
                          help="an app of the host; or an agent folder (agent.py or root_agent.yaml), evaluated in "
                               "this process")
    evaluate.add_argument("files", nargs="+", metavar="EVAL_SET[:CASE,...]",
                          help="google-adk eval set files (*.evalset.json), or with an AGENT_DIR the id of a set "
                               "in it; ':CASE,CASE' runs only those cases")
    evaluate.add_argument("--metric", action="append", default=[],
                          help="NAME[=THRESHOLD], repeatable (default: tool_trajectory_avg_score=1.0 "
                               "response_match_score=0.8; with an AGENT_DIR, the eval config's criteria)")
    evaluate.add_argument("--print_detailed_results", action="store_true",
                          help="print expected against actual for every invocation, passed cases too "
                               "(failed ones always are)")
    evaluate.add_argument("--config_file_path", default=None,
                          help="a google-adk eval config (test_config.json: criteria with thresholds, match types, "
                               "judge models, rubrics); instead of --metric (with an AGENT_DIR, default: the "
                               "test_config.json beside the one eval set file named)")
    evaluate.set_defaults(func=cmd_eval)
    status = common(sub.add_parser("status", help="the live supervision tree"))
    status.add_argument("--offset", type=int, default=0, help="the first held session shown (default: 0)")
    status.add_argument("--limit", type=int, default=50, help="how many held sessions are shown (default: 50)")
    status.add_argument("--search", default="",
                        help="only the sessions whose app/user/session, or one of whose run ids, contains this")
    status.set_defaults(func=cmd_status)
    chaos = sub.add_parser("chaos", help="fault injection")
    chaos_sub = chaos.add_subparsers(dest="chaos_command", required=True)
    kill = common(chaos_sub.add_parser("kill", help="kill -9 an actor and watch it come back"))
    kill.add_argument("target", nargs="?")
    kill.add_argument("--random", action="store_true")
    kill.set_defaults(func=cmd_chaos)
    soak = common(chaos_sub.add_parser("soak", help="drive sessions while killing random actors; report LOST/HUNG"))
    soak.add_argument("--app", help="the app whose sessions talk (default: weather_bot, else the first)")
    soak.add_argument("--sessions", type=int, default=8)
    soak.add_argument("--duration", type=float, default=60.0, help="seconds of kills")
    soak.add_argument("--interval", type=float, default=200.0, help="milliseconds between two kills")
    soak.add_argument("--targets", default="root,services,partitions,pools,workers",
                      help="kinds of actor to kill, comma-separated: the processes (root, services, partitions, "
                           "pools, workers), and sessions (crashed) and runs (killed alone)")
    soak.add_argument("--turn-timeout", type=float, default=30.0, help="a turn's deadline, seconds")
    soak.add_argument("--seed", type=int, help="for a repeatable choice of victims")
    soak.add_argument("--stops", type=float, default=0.0,
                      help="the fraction of faults that stop an actor (SIGSTOP) instead of killing it, 0 to 1")
    soak.add_argument("--jobs", type=int, default=0,
                      help="background jobs enqueued meanwhile: each must end, never two attempts at once")
    soak.add_argument("--resume", action="store_true",
                      help="resume the turns a kill ends (durable runs): every one must complete")
    soak.add_argument("--cluster", action="store_true",
                      help="deal the faults across every host of the cluster (hosts on this machine)")
    soak.add_argument("--all", action="store_true",
                      help="sessions and runs of anyone on the host may be crashed and killed (default: the soak's own)")
    soak.set_defaults(func=cmd_soak)
    sessions = common(sub.add_parser("sessions", help="list, show or delete sessions"))
    sessions.add_argument("action", choices=["list", "show", "delete", "reset"])
    sessions.add_argument("app")
    sessions.add_argument("session", nargs="?")
    sessions.add_argument("--user", default=DEFAULT_USER, help=f"whose session (default: {DEFAULT_USER})")
    sessions.set_defaults(func=cmd_sessions)
    approvals = common(sub.add_parser("approvals", help="tool calls waiting for a human decision"))
    approvals.add_argument("action", choices=["list", "approve", "deny"])
    approvals.add_argument("app")
    approvals.add_argument("id", nargs="?")
    approvals.add_argument("--reason", default="denied by a human")
    approvals.add_argument("--all", action="store_true", help="list decided approvals too")
    approvals.set_defaults(func=cmd_approvals)
    inputs = remote(common(sub.add_parser("inputs", help="questions workflow nodes wait for (RequestInput): "
                                                         "list, answer")))
    inputs.add_argument("action", choices=["list", "answer"])
    inputs.add_argument("app")
    inputs.add_argument("id", nargs="?", help="answer: the request's id (its interruptId)")
    inputs.add_argument("answer", nargs="?", help="answer: the answer, JSON (a value or an object) or text")
    inputs.add_argument("--session", help="the session (answer: needed; list: default all of the user's)")
    inputs.add_argument("--user", default=DEFAULT_USER, help=f"whose session (default: {DEFAULT_USER})")
    inputs.set_defaults(func=cmd_inputs)
    resume = remote(common(sub.add_parser("resume", help="continue a failed run from its last committed step")))
    resume.add_argument("app")
    resume.add_argument("session")
    resume.add_argument("run_id")
    resume.add_argument("--user", default=DEFAULT_USER, help=f"whose session (default: {DEFAULT_USER})")
    resume.add_argument("--rerun", action="append", default=[], metavar="CALL", help="run this pending call again")
    resume.add_argument("--result", action="append", default=[], metavar="CALL=JSON",
                        help="this pending call ran, and this was its result")
    resume.add_argument("--end", action="append", default=[], metavar="CALL", help="end the run at this call")
    resume.set_defaults(func=cmd_resume)
    jobs = common(sub.add_parser("jobs", help="background jobs: list, show, enqueue, cancel, retry, discard"))
    jobs.add_argument("action", choices=["list", "show", "enqueue", "cancel", "retry", "discard"])
    jobs.add_argument("id", nargs="?", help="the job (show, cancel, retry, discard)")
    jobs.add_argument("--queue", help="list: only this queue; enqueue: the queue (default: default)")
    jobs.add_argument("--state", help="list: only jobs in this state")
    jobs.add_argument("--limit", type=int, default=100)
    jobs.add_argument("--app", help="enqueue: the app to run")
    jobs.add_argument("--message", help="enqueue: the message the run answers")
    jobs.add_argument("--session", help="enqueue: an existing session (default: a new one per job)")
    jobs.add_argument("--function", help="enqueue: a function, package.module:name, instead of a run")
    jobs.add_argument("--args", help="enqueue: the function's arguments, a JSON object")
    jobs.add_argument("--user", default=DEFAULT_USER, help=f"enqueue: whose job it is (default: {DEFAULT_USER})")
    jobs.add_argument("--in", dest="schedule_in", type=float, help="enqueue: due in this many seconds")
    jobs.add_argument("--max-attempts", type=int, default=20)
    jobs.add_argument("--unique", help="enqueue: a unique key (a duplicate within 60 s returns that job)")
    jobs.set_defaults(func=cmd_jobs)
    mcp = common(sub.add_parser("mcp", help="the host's apps as MCP tools on stdin/stdout"))
    mcp.add_argument("--user", default="mcp", help="whose sessions the calls make (default: mcp)")
    mcp.set_defaults(func=cmd_mcp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, run the command, and turn its failures into an exit code and a
    line on standard error (see the module). A reader that goes away (``status | head``)
    ends the command quietly with 0: standard output is pointed at /dev/null so that
    nothing fails again when Python flushes it at exit."""
    try:
        code = _dispatch(argv)
        sys.stdout.flush()  # here, not at exit: a closed pipe is seen while it can be handled
        return code
    except BrokenPipeError:
        _silence_stdout()
        return 0


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file behind sys.stdout (a test's capture)
        pass


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "config"):
        args.config = None
    if getattr(args, "chaos_command", None) == "kill" and not args.random and not args.target:
        parser.error("chaos kill needs a TARGET or --random")
    if args.command == "sessions" and args.action in ("show", "delete", "reset") and not args.session:
        parser.error(f"sessions {args.action} needs a SESSION")
    if args.command == "approvals" and args.action != "list" and not args.id:
        parser.error(f"approvals {args.action} needs an approval ID")
    if args.command == "inputs" and args.action == "answer" and (args.answer is None or not args.session):
        parser.error("inputs answer needs a request ID, an ANSWER and --session")
    try:
        result: int = args.func(args)
        return result
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except AdkError as exc:  # RunFailedError, HostError ... : a line, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        raise  # main's to handle
    except Exception as exc:
        if type(exc).__module__.startswith("supervision"):  # the host's own layer: its detail, not its name
            print(f"error: the host answered: {getattr(exc, 'detail', '') or exc}", file=sys.stderr)
            return 1
        raise
