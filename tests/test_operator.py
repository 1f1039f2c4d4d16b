"""What an operator of ``adk-actors serve`` meets on a machine shared with other hosts
(issue 59, item 5): a front door on a loopback address of its own takes requests
addressed to it; Thespian's own log lives in the host's data folder; a ``serve`` killed
(kill -9 of its process group) leaves no process of its host behind."""

from __future__ import annotations

import os
import re
import signal
import socket
import stat
import tempfile
import time
from pathlib import Path

import httpx
from conftest import last_text, serving

from supervision.lowlevel import free_port
from supervision.testing import find_marked_processes, wait_until

ADDRESS = "127.77.1.2"  # a loopback address of its own, as hosts sharing one machine have


# -- the Host header -----------------------------------------------------------------------------


def _raw_get(address: str, port: int, headers: list[str]) -> int:
    """The status of a ``GET /list-apps`` sent byte for byte, ``headers`` as given."""
    with socket.create_connection((address, port), timeout=10) as conn:
        conn.sendall(("GET /list-apps HTTP/1.1\r\n" + "".join(f"{h}\r\n" for h in headers)
                      + "Connection: close\r\n\r\n").encode())
        head = conn.recv(1024).decode("latin-1")
    return int(head.split()[1])


def test_a_front_door_on_a_loopback_address_of_its_own_takes_its_address_and_names_as_host(tmp_path: Path) -> None:
    """Bound to 127.77.1.2, the front door answers requests whose Host is that address
    (with its port or none), a loopback name, or a name the host is configured with
    (``allow_origins``, ``public_url``); a foreign name (a page whose DNS was rebound to
    the address) is still refused, and so is a request with two Host headers."""
    http_port = free_port(ADDRESS)
    toml = (f'[http]\naddress = "{ADDRESS}"\nport = {http_port}\n'
            'allow_origins = ["http://console.example:8080"]\npublic_url = "https://agents.example"\n')
    with serving(tmp_path, f'address = "{ADDRESS}"\n', more_toml=toml) as served:
        assert served["url"] == f"http://{ADDRESS}:{http_port}"
        with httpx.Client(base_url=served["url"], timeout=30) as client:
            assert client.get("/list-apps").json() == ["weather_bot"]  # Host: 127.77.1.2:<port>, as any client sends
            assert client.get("/").status_code == 200  # the console's page
            for host in (ADDRESS, f"localhost:{http_port}", "localhost", f"127.0.0.1:{http_port}",
                         "console.example:8080", "console.example", "agents.example", "AGENTS.example:443"):
                answer = client.get("/list-apps", headers={"host": host})
                assert answer.status_code == 200, (host, answer.text)
            for host in ("evil.example", f"evil.example:{http_port}", f"{ADDRESS}:{http_port + 1}",
                         f"{ADDRESS}.evil.example:{http_port}", f"console.example.evil.example:{http_port}"):
                refused = client.get("/list-apps", headers={"host": host})
                assert (refused.status_code, refused.text) == (403, "Forbidden: host not allowed"), host
        own = f"Host: {ADDRESS}:{http_port}"
        assert _raw_get(ADDRESS, http_port, [own]) == 200
        assert _raw_get(ADDRESS, http_port, [own, "Host: evil.example"]) in (400, 403)  # smuggled: never served


# -- Thespian's own log --------------------------------------------------------------------------


def _machine_log_lines_of(pids: set[int], since: dict[str, int]) -> list[str]:
    """Lines written to the machine-wide ``$TMPDIR/thespian.log`` (and its ``.old``) after
    the sizes in ``since`` by one of ``pids`` (a rotated file is read whole). Other hosts
    and tests on the machine may write there meanwhile: only lines of these pids count."""
    found: list[str] = []
    for name, before in since.items():
        try:
            data = Path(name).read_bytes()
        except FileNotFoundError:
            continue
        text = (data[before:] if len(data) >= before else data).decode("utf-8", "replace")
        found += [line for line in text.splitlines()
                  if (m := re.match(r"\S+ \S+ p(\d+) ", line)) and int(m.group(1)) in pids]
    return found


def _turn(url: str, session: str) -> str:
    """A new session of weather_bot's and one turn in it: the answer's text."""
    httpx.post(f"{url}/apps/weather_bot/users/ann/sessions/{session}", json={}, timeout=30).raise_for_status()
    return last_text(url, "weather_bot", "What's the weather in Paris?", session=session)


def _pids_in(text: str) -> set[int]:
    """The pids of Thespian log lines (``<date> <time> p<pid> <level> ...``)."""
    return {int(pid) for pid in re.findall(r"^\S+ \S+ p(\d+) ", text, re.MULTILINE)}


def _machine_log_sizes() -> dict[str, int]:
    machine = Path(os.environ.get("TMPDIR", tempfile.gettempdir())) / "thespian.log"
    sizes = {}
    for path in (machine, machine.with_name("thespian.log.old")):
        sizes[str(path)] = path.stat().st_size if path.exists() else 0
    return sizes


def test_thespians_log_lives_in_the_hosts_data_folder(tmp_path: Path) -> None:
    """A host's Thespian log is ``<data_dir>/thespian.log``, 0600, with the lines of its
    actor system's processes; the machine-wide ``/tmp/thespian.log`` gets no line from
    any of them."""
    before = _machine_log_sizes()
    log = tmp_path / "data" / "thespian.log"
    with serving(tmp_path, env={"THESPLOG_THRESHOLD": "INFO"}) as served:
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
        assert _turn(served["url"], "s1") == "It is 21 °C and clear in Paris."
        pids = set(find_marked_processes(served["marker"]))
        assert served["process"].pid in pids and len(pids) > 3
        wait_until(lambda: _pids_in(log.read_text()) & pids, timeout=20, message="a line of the host's processes")
    assert _machine_log_lines_of(pids, before) == []


def test_thespians_log_is_capped_as_the_environment_says(tmp_path: Path) -> None:
    """At ``THESPLOG_FILE_MAXSIZE`` bytes Thespian's log moves to ``thespian.log.old`` and
    starts again: the data folder keeps at most about twice the cap, private (0700)."""
    cap = 10 * 1024  # Thespian's smallest (below it, it writes no log at all)
    log = tmp_path / "data" / "thespian.log"
    with serving(tmp_path, env={"THESPLOG_THRESHOLD": "DEBUG", "THESPLOG_FILE_MAXSIZE": str(cap)}) as served:
        for session in ("s1", "s2", "s3"):  # DEBUG: every message is a line
            assert _turn(served["url"], session)
        wait_until(lambda: log.with_name("thespian.log.old").exists(), timeout=30, message="the log rotated")
        # once over the cap a file is rotated before the next line: one line may pass it
        for path in (log, log.with_name("thespian.log.old")):
            assert path.stat().st_size < cap + 4096, path
        assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700  # a file started by the rotation is private too
        assert _pids_in(log.with_name("thespian.log.old").read_text()) & set(find_marked_processes(served["marker"]))


def test_an_operators_thesplog_file_wins(tmp_path: Path) -> None:
    """``THESPLOG_FILE`` in serve's environment names the file Thespian's log goes to;
    the data folder then holds none."""
    chosen = tmp_path / "ops" / "thespian-ops.log"
    chosen.parent.mkdir()
    with serving(tmp_path, env={"THESPLOG_FILE": str(chosen), "THESPLOG_THRESHOLD": "INFO"}) as served:
        wait_until(lambda: chosen.exists() and chosen.stat().st_size > 0, timeout=20,
                   message="a line in the operator's file")
        assert not (tmp_path / "data" / "thespian.log").exists()
        pids = set(find_marked_processes(served["marker"]))
    assert _pids_in(chosen.read_text()) & pids


# -- the host's process groups -------------------------------------------------------------------


def _groups(pids: list[int]) -> set[int]:
    found = set()
    for pid in pids:
        try:
            found.add(os.getpgid(pid))
        except ProcessLookupError:
            pass
    return found


def _stoppers(port: int) -> list[int]:
    """Pids of ``python -m supervision stop --port PORT`` (what stops a system whose
    owner died; it runs in a session of its own and is not marked)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            line = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"supervision" in line and b"stop" in line and str(port).encode() in line:
            found.append(int(entry))
    return found


def _in_group(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_kill_9_of_serves_process_group_leaves_no_process_of_the_host(tmp_path: Path) -> None:
    """``serve`` in a process group of its own (as a shell or a service manager starts
    it); kill -9 of that group: every process the host started, in whatever group
    (the actor system's admin makes one of its own), is gone within the deadline, and
    the host's ports are free for a new ``serve``."""
    with serving(tmp_path, prefix=("setsid",)) as served:
        serve = served["process"]
        assert os.getpgid(serve.pid) == serve.pid
        pids = find_marked_processes(served["marker"])
        assert len(_groups(pids)) >= 2, "the actor system runs in a process group of its own"
        started = time.monotonic()
        os.killpg(serve.pid, signal.SIGKILL)
        serve.wait(10)
        groups = _groups(pids) - {serve.pid}  # the actor system's
        wait_until(lambda: not find_marked_processes(served["marker"]) and not _stoppers(served["port"])
                   and not any(_in_group(g) for g in groups), timeout=30,
                   message="every process of the killed host ended")
        print(f"the host's last process ended {time.monotonic() - started:.2f} s after kill -9 of serve's group")


def test_a_stopped_serve_exits_after_every_process_of_its_host(tmp_path: Path) -> None:
    """SIGTERM: ``serve`` stops the host and exits 0 only once every process it started
    (the actor system's group included) has ended: nothing is left for a moment after."""
    with serving(tmp_path, prefix=("setsid",)) as served:
        serve = served["process"]
        assert _turn(served["url"], "s1") == "It is 21 °C and clear in Paris."
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(60) == 0, served["err"].read_text()
        left = find_marked_processes(served["marker"])
        assert left == [], f"processes of the host left after serve exited: {left}"
