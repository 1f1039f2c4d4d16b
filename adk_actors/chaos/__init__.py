"""Chaos: kill actors of a running host while sessions talk to it, then prove nothing was lost.

:func:`soak` is what ``adk-actors chaos soak`` runs, and what a user runs to prove
their own agents survive faults. In order:

1. create ``sessions`` sessions of ``app`` and start one thread per session, each
   running turns back to back (every turn has a deadline: ``turn_timeout``);
2. every ``interval`` seconds, SIGKILL one actor, for ``duration`` seconds: of the
   kinds in ``targets`` (see :data:`TARGET_KINDS`) that have a live actor, the kind
   hit least so far (ties at random; the root only while no level of the tree is
   restarting), then one of its actors at random; a process,
   or a session (crashed: ``CrashSession``) or a run (``KillRun``), the actors that
   are not processes;
3. stop killing, give every turn in flight ``turn_timeout`` more seconds (a turn
   still running then is HUNG), and wait until every actor of the tree runs again
   (restored, and how long that took);
4. reset the sessions that failed (crashed beyond their restart intensity), then read
   every session back: an event a caller received (each is committed before it is
   sent) but the store does not have is LOST;
5. run one more turn on every session (valid: it ends well), and look for orphans
   (processes of the host's process group whose parent is gone).

With ``jobs``, background jobs run through it all: that many jobs of
:func:`soak_job` are enqueued while the faults go on (each with its unique key, so an
enqueue whose answer was lost is asked again safely); at the end every one must be
completed or discarded (one that is not, once the tree is restored, is
``jobs_unfinished``), and no two attempts of one job may have run at once (each
attempt holds a lock named after its job while it works: one that finds it taken is
an ``jobs_overlaps``).

The host must run on this machine (kills and orphans are found by pid).

``adk-actors chaos kill`` kills one actor (:func:`kill_row`) and waits with
:func:`wait_back` until it is back and the whole host serves again, what its
supervisor restarted with it included; :func:`serving_problems` is that test of a
tree, the one ``status`` prints under the tree and the soak waits for at its end.

The package's modules, each private: ``_deadline`` (calls' deadlines scaled to the
load), ``_tree`` (the walk of the live tree, its rows), ``_back`` (a kill, and the wait
until the host serves again), ``_soak`` (the soak), ``_faults`` (the soak's victims and
its checks of the tree), ``_report`` (what a soak found), ``_soak_job`` (its
background jobs).
"""

from ._back import BACK_TIMEOUT, NotBackError, back_problems, kill_row, serving_problems, wait_back
from ._back import killable as killable
from ._deadline import BUSY_WAIT_CAP, BUSY_WAIT_FACTOR, scaled_deadline
from ._report import SoakReport, UnfinishedResume, describe_unfinished
from ._soak import check_soak_arguments, soak
from ._soak_job import soak_job
from ._tree import (
    PROCESS_KINDS,
    SESSIONS_SHOWN,
    TARGET_KINDS,
    cluster_trees,
    find_rows,
    session_rows,
    tree_rows,
)
from ._tree import kind_of as kind_of

__all__ = ["BACK_TIMEOUT", "BUSY_WAIT_CAP", "BUSY_WAIT_FACTOR", "PROCESS_KINDS", "SESSIONS_SHOWN", "TARGET_KINDS",
           "NotBackError", "SoakReport", "UnfinishedResume", "back_problems", "check_soak_arguments",
           "cluster_trees", "describe_unfinished", "find_rows", "kill_row", "scaled_deadline", "serving_problems",
           "session_rows", "soak", "soak_job", "tree_rows", "wait_back"]
