"""pgharness.py -- the crash, wraparound, fault and benchmark scripts' view of
the shared cluster harness (test/harness/pgcluster.py): the same Cluster, with
the settings every crash test starts from and a per-run settings file
(set_conf, read at the next start).  Kills go to the pids of this cluster's
postmaster and its children, by pid.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import pgcluster  # noqa: E402
from pgcluster import RUN_USER, PsqlError, as_user, chown_tree, ensure_user, log_problems  # noqa: E402,F401

# the binaries of the private installation (TIDES_PG_BINDIR; test/crash/run.sh sets it)
BINDIR = pgcluster.bindir(need_tidesam=True)

CRASH_CONF = {
    "max_connections": "40",
    "shared_buffers": "32MB",
    "log_line_prefix": "'%m [%p] '",
}


def pg_config(what):
    """the installed server's pg_config (headers and libpq for bank.c)"""
    return pgcluster._pg_config(what)


class Cluster(pgcluster.Cluster):
    def initdb(self, conf):
        return super().initdb(dict(CRASH_CONF, **conf), per_run_conf=True)
