"""The child interpreter of ``SandboxedCodeExecutor`` (run as ``python -I -c``, its
settings as JSON in argv[1]). In order: resource limits (CPU time, address space, file
size, no core files), SIGXFSZ ignored (a write past the file-size limit raises
``OSError``), the working folder as cwd, then an audit hook that refuses, with
``PermissionError``: starting processes (fork, exec, spawn, system, subprocess),
writing, creating, renaming or deleting files outside the working folder, signals to
other processes, raising the limits, calls through ctypes and, unless the process has
no network namespace of its own, sockets other than AF_UNIX. Then the code runs as
``__main__``; with ``serve`` set (a stateful executor's session) it runs one code after
another in the same globals instead, each read as a JSON line from stdin and answered
as a JSON line (its stdout, stderr and status) on what was stdout, each under a CPU-time
limit of its own, and at the end of stdin, or when a watchdog thread sees its parent gone, the process removes its folder and ends. A ``MemoryError`` or a write past the file-size limit is reported as the
limit it hit; any other exception as Python prints it (without this file's frames);
both exit 1.

The audit hook works at Python's level: it is a guard against code that misbehaves,
the resource limits and the network namespace are the kernel's.
"""

import io
import json
import math
import os
import resource
import shutil
import signal
import socket
import sys
import threading
import time
import traceback

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_STARTS = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen",
           "os.startfile", "pty.spawn"}
_PATH_CHANGES = {"os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1), "os.link": (0, 1),
                 "os.symlink": (1,), "os.chmod": (0,), "os.chown": (0,), "os.truncate": (0,), "os.utime": (0,),
                 "shutil.rmtree": (0,), "shutil.copyfile": (1,), "shutil.copytree": (1,), "shutil.move": (1,),
                 "os.mkfifo": (0,), "os.mknod": (0,), "os.lchown": (0,), "os.chflags": (0,)}


def _limit(kind: int, value: int, hard: int | None = None) -> None:
    resource.setrlimit(kind, (value, value if hard is None else hard))


def _hook(folder: str, block_sockets: bool, runner_may: list):  # type: ignore[no-untyped-def,type-arg]
    me = os.getpid()

    def inside(path: object) -> bool:
        if isinstance(path, int):
            return True  # an open descriptor: opening it was checked
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, (str, os.PathLike)):
            return True
        real = os.path.realpath(os.path.join(folder, os.fspath(path)))
        return real == folder or real.startswith(folder + os.sep)

    def refuse(what: str) -> None:
        raise PermissionError(f"the sandbox does not allow {what}")

    def hook(event: str, args: tuple) -> None:  # type: ignore[type-arg]
        if runner_may:  # the runner's own step (setting up, moving the CPU limit)
            return
        if event in _STARTS:
            refuse("starting processes (fork, exec, spawn, subprocess)")
        elif event == "open":
            path, mode, flags = args
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writing and path is not None and not inside(path):
                refuse(f"writing outside its working folder: {path!r}")
        elif event in _PATH_CHANGES:
            for index in _PATH_CHANGES[event]:
                if index < len(args) and not inside(args[index]):
                    refuse(f"changing files outside its working folder: {args[index]!r}")
        elif event in ("os.kill", "os.killpg", "signal.pthread_kill"):
            if event != "os.kill" or args[0] not in (0, me):
                refuse("signalling other processes")
        elif event in ("resource.setrlimit", "resource.prlimit"):
            refuse("changing its resource limits")
        elif event == "ctypes.call_function":
            refuse("calling C functions through ctypes")
        elif event == "socket.__new__" and block_sockets:
            family = args[1]
            if family != socket.AF_UNIX:
                refuse("network access")

    return hook


def _failure(error: BaseException, settings: dict) -> str:  # type: ignore[type-arg]
    """How a failed run reads: a limit it hit, else the traceback without our frames."""
    if isinstance(error, MemoryError):
        return (f"MemoryError: the code ran out of memory (its limit is {settings['memory_bytes']} bytes "
                "of address space)\n")
    if isinstance(error, OSError) and error.errno == 27:  # EFBIG
        return f"OSError: the code wrote a file past its size limit of {settings['file_size_bytes']} bytes\n"
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename != "<string>"]
    return "".join(["Traceback (most recent call last):\n", *traceback.format_list(frames),
                    *traceback.format_exception_only(type(error), error)])


class _Capped(io.TextIOBase):
    """A run's stdout or stderr in memory, cut at ``limit`` characters."""

    def __init__(self, limit: int) -> None:
        self.limit, self.size = limit, 0
        self.parts: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        room = self.limit - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(room, len(text))
        return len(text)

    def text(self) -> str:
        return "".join(self.parts)


def _serve(settings: dict, scope: dict, runner_may: list, parent: int) -> None:  # type: ignore[type-arg]

    def watch() -> None:  # the owner is gone: nobody will close this session
        while os.getppid() == parent:
            time.sleep(1)
        shutil.rmtree(settings["folder"], ignore_errors=True)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    quiet = os.open(os.devnull, os.O_WRONLY)  # C-level writes to 1 and 2 go nowhere
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    runner_may.clear()  # from here on, the hook refuses what the code must not do
    requests = sys.stdin
    sys.stdin = io.StringIO()
    limit = settings["max_output_chars"] + 1
    for line in requests:
        code_text = json.loads(line)["code"]
        used = resource.getrusage(resource.RUSAGE_SELF)
        runner_may.append(True)
        resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(used.ru_utime + used.ru_stime) + settings["cpu_seconds"],
                                                 resource.RLIM_INFINITY))
        runner_may.clear()
        out, err = _Capped(limit), _Capped(limit)
        sys.stdout, sys.stderr = out, err
        status = 0
        try:
            exec(compile(code_text, "<code>", "exec"), scope, scope)
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except BaseException as error:  # the code's failure is its result
            err.write(_failure(error, settings))
            status = 1
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        replies.write(json.dumps({"stdout": out.text(), "stderr": err.text(), "status": status}) + "\n")
        replies.flush()
    shutil.rmtree(settings["folder"], ignore_errors=True)  # stdin closed: the owner closed or left this session


def main() -> None:
    settings = json.loads(sys.argv[1])
    folder = os.path.realpath(settings["folder"])
    serving = settings.get("serve", False)
    if not serving:
        _limit(resource.RLIMIT_CPU, settings["cpu_seconds"], settings["cpu_seconds"] + 1)
    _limit(resource.RLIMIT_AS, settings["memory_bytes"])
    _limit(resource.RLIMIT_FSIZE, settings["file_size_bytes"])
    _limit(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    os.chdir(folder)
    scope = {"__name__": "__main__", "__builtins__": __builtins__}
    sys.path[:] = [folder, *(p for p in sys.path if p)]
    runner_may: list = []  # type: ignore[type-arg]
    if serving:
        runner_may.append(True)
        sys.addaudithook(_hook(folder, settings["block_sockets"], runner_may))
        _serve(settings, scope, runner_may, os.getppid())
        return
    with open(settings["code_path"], encoding="utf-8") as handle:
        source = handle.read()
    code = compile(source, "<code>", "exec")
    sys.addaudithook(_hook(folder, settings["block_sockets"], runner_may))
    try:
        exec(code, scope, scope)
    except SystemExit:
        raise
    except BaseException as error:  # the code's failure is its result, printed as Python would
        sys.stderr.write(_failure(error, settings))
        sys.exit(1)


if __name__ == "__main__":
    main()
