"""indexd/procs.py: a child started by a process that is then SIGKILLed exits by itself.

tests/e2e/test_orphans.py covers the real commands (Linux: PR_SET_PDEATHSIG);
here the two other ways out: the parent-pid poll used where there is no death
signal (macOS), and a parent already gone before the child could arm anything.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from testlib import proc_info, still_alive, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc to see the grandchild")

# The middle process starts a child that arms the poll fallback, reports its
# pid, and then waits to be killed.
MIDDLE = r'''
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", """
import os, sys, time
import indexd.procs as procs
procs._arm_death_signal = lambda: False     # as on macOS
procs.die_with_parent(os.getppid())
print(os.getpid(), flush=True)
time.sleep(120)
"""], stdout=sys.stdout)
time.sleep(120)
'''


def test_the_poll_fallback_ends_the_child_when_its_parent_is_killed():
    middle = subprocess.Popen([sys.executable, "-c", MIDDLE], stdout=subprocess.PIPE, text=True)
    try:
        child = proc_info(int(middle.stdout.readline()))
        assert child is not None and child.ppid == middle.pid
        middle.send_signal(signal.SIGKILL)
        middle.wait(timeout=30)
        wait_until(lambda: not still_alive([child]), timeout=10,
                   what="the child to notice its parent is gone")
    finally:
        middle.kill()
        middle.wait(timeout=30)
        middle.stdout.close()


def test_a_child_whose_parent_died_before_it_armed_exits_at_once():
    """Seen from the child, that is a parent pid which is no longer its parent's."""
    proc = subprocess.run([sys.executable, "-c",
                           "import indexd.procs as p, os; p.die_with_parent(os.getppid() + 1); "
                           "print('still here')"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "still here" not in proc.stdout, proc
