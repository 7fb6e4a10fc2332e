"""memcap -- a memory cgroup around a PostgreSQL server.

The Insert Benchmark's IO-bound profile needs the whole server -- postmaster,
backends, background workers, their shared memory (shared_buffers, the tides
memtables and block cache) and the page cache of the files they read and
write -- under one memory limit.  A memory cgroup does exactly that: every
page a member process touches (anonymous, shared memory, page cache) is
charged to it, and when the charge reaches the limit the kernel reclaims
from the group (page cache first) instead of letting it grow.

cgroup v1 (the `memory` controller mounted at /sys/fs/cgroup/memory, as on
the project machines) and v2 (`memory` in /sys/fs/cgroup/cgroup.controllers,
limit in memory.max) are both supported.  Root is needed to create groups.

A process joins by writing its pid to cgroup.procs; children inherit the
group.  MemCap.wrap(cmd) returns a command that joins and then execs cmd,
so `pg_ctl start` run through it starts a postmaster that is inside the
group from its first page on (shared memory is charged to the group whose
process first touches it).

The group can also be frozen (freeze/thaw): every member stops where it is
and keeps its memory, until thawed.  v1 keeps that in a second hierarchy,
the `freezer` controller (a group of the same name under
/sys/fs/cgroup/freezer, joined by the same wrapper); v2 in the group's own
cgroup.freeze.  ibench freezes the clusters that are not being measured, so
that engines measured step by step, side by side, do not run their
background work (compaction, autovacuum, checkpoints) during another
engine's step.
"""

import os
import time

V1_ROOT = "/sys/fs/cgroup/memory"
V2_ROOT = "/sys/fs/cgroup"
V1_FREEZER = "/sys/fs/cgroup/freezer"


def detect():
    """'v1', 'v2' or None"""
    if os.path.exists(os.path.join(V1_ROOT, "memory.limit_in_bytes")):
        return "v1"
    try:
        with open(os.path.join(V2_ROOT, "cgroup.controllers")) as f:
            if "memory" in f.read().split():
                return "v2"
    except OSError:
        pass
    return None


def _read(path):
    with open(path) as f:
        return f.read()


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


class MemCap:
    """one memory cgroup with a limit in bytes (None: no limit, only the
    accounting)"""

    def __init__(self, name, limit_bytes):
        self.kind = detect()
        if self.kind is None:
            raise RuntimeError("no memory cgroup controller (looked for %s/memory.limit_in_bytes and "
                               "memory in %s/cgroup.controllers)" % (V1_ROOT, V2_ROOT))
        self.limit = limit_bytes
        root = V1_ROOT if self.kind == "v1" else V2_ROOT
        if self.kind == "v2":
            # the parent must hand the memory controller down
            try:
                sub = _read(os.path.join(root, "cgroup.subtree_control")).split()
                if "memory" not in sub:
                    _write(os.path.join(root, "cgroup.subtree_control"), "+memory")
            except OSError as e:
                raise RuntimeError("cannot enable the memory controller for children of %s: %s" % (root, e))
        self.path = os.path.join(root, name)
        if os.path.isdir(self.path):
            self._empty_and_remove()
        os.mkdir(self.path)
        if self.kind == "v1":
            lim = str(limit_bytes) if limit_bytes else "-1"
            _write(os.path.join(self.path, "memory.limit_in_bytes"), lim)
            # no swap on the project machines; the cap is on memory alone
        else:
            _write(os.path.join(self.path, "memory.max"), str(limit_bytes) if limit_bytes else "max")
            try:
                _write(os.path.join(self.path, "memory.swap.max"), "0")
            except OSError:
                pass
        self._peak = 0
        self.freezer = None
        if self.kind == "v1" and os.path.exists(os.path.join(V1_FREEZER, "cgroup.procs")):
            self.freezer = os.path.join(V1_FREEZER, name)
            if os.path.isdir(self.freezer):
                _remove_group(self.freezer)
            os.mkdir(self.freezer)

    @property
    def procs_file(self):
        return os.path.join(self.path, "cgroup.procs")

    def wrap(self, cmd):
        """cmd, run by a shell that first moves itself into this group (and
        into its freezer group, on v1)"""
        if self.freezer:
            return ["sh", "-c", 'echo $$ > "$0" && echo $$ > "$1" && shift && exec "$@"',
                    self.procs_file, os.path.join(self.freezer, "cgroup.procs")] + list(cmd)
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', self.procs_file] + list(cmd)

    def can_freeze(self):
        return self.freezer is not None or self.kind == "v2"

    def _set_frozen(self, frozen):
        if self.freezer:
            f, want = os.path.join(self.freezer, "freezer.state"), ("FROZEN" if frozen else "THAWED")
            _write(f, want)
            for _ in range(600):  # FREEZING until every member has stopped
                if _read(f).strip() == want:
                    return
                time.sleep(0.01)
            raise RuntimeError("%s did not become %s" % (self.freezer, want))
        if self.kind == "v2":
            _write(os.path.join(self.path, "cgroup.freeze"), "1" if frozen else "0")
            for _ in range(600):
                ev = _read(os.path.join(self.path, "cgroup.events"))
                if ("frozen %d" % int(frozen)) in ev:
                    return
                time.sleep(0.01)
            raise RuntimeError("%s did not %s" % (self.path, "freeze" if frozen else "thaw"))
        raise RuntimeError("no freezer for %s" % self.path)

    def freeze(self):
        """stop every member where it is (memory kept) until thaw()"""
        self._set_frozen(True)

    def thaw(self):
        self._set_frozen(False)

    def pids(self):
        try:
            return [int(x) for x in _read(self.procs_file).split()]
        except OSError:
            return []

    def usage(self):
        """bytes charged now (anonymous + shared memory + page cache + kernel)"""
        f = "memory.usage_in_bytes" if self.kind == "v1" else "memory.current"
        return int(_read(os.path.join(self.path, f)))

    def peak(self):
        """the highest charge since the group was made (v1 max_usage_in_bytes;
        v2 memory.peak where the kernel has it, else the highest sample)"""
        try:
            f = "memory.max_usage_in_bytes" if self.kind == "v1" else "memory.peak"
            return int(_read(os.path.join(self.path, f)))
        except (OSError, ValueError):
            return self._peak

    def reset_peak(self):
        try:
            if self.kind == "v1":
                _write(os.path.join(self.path, "memory.max_usage_in_bytes"), "0")
            else:
                _write(os.path.join(self.path, "memory.peak"), "0")
        except OSError:
            pass
        self._peak = 0

    def stat(self):
        """memory.stat as a dict, with the keys normalised across v1 and v2:
        anon, file (page cache), shmem, file_dirty, file_writeback,
        refault_file (page-cache refaults: pages read back after reclaim),
        plus every raw key"""
        raw = {}
        try:
            for line in _read(os.path.join(self.path, "memory.stat")).splitlines():
                k, v = line.split()
                raw[k] = int(v)
        except (OSError, ValueError):
            return {}
        if self.kind == "v1":
            norm = {"anon": raw.get("rss", 0), "file": raw.get("cache", 0), "shmem": raw.get("shmem", 0),
                    "file_dirty": raw.get("dirty", 0), "file_writeback": raw.get("writeback", 0),
                    "refault_file": raw.get("workingset_refault_file", raw.get("workingset_refault", 0))}
        else:
            norm = {"anon": raw.get("anon", 0), "file": raw.get("file", 0), "shmem": raw.get("shmem", 0),
                    "file_dirty": raw.get("file_dirty", 0), "file_writeback": raw.get("file_writeback", 0),
                    "refault_file": raw.get("workingset_refault_file", 0)}
        raw.update(norm)
        return raw

    def events(self):
        """limit hits and OOM kills: v1 failcnt and oom_control, v2 memory.events"""
        out = {"limit_hits": 0, "oom_kill": 0}
        try:
            if self.kind == "v1":
                out["limit_hits"] = int(_read(os.path.join(self.path, "memory.failcnt")))
                for line in _read(os.path.join(self.path, "memory.oom_control")).splitlines():
                    k, v = line.split()
                    if k == "oom_kill":
                        out["oom_kill"] = int(v)
            else:
                for line in _read(os.path.join(self.path, "memory.events")).splitlines():
                    k, v = line.split()
                    if k == "max":
                        out["limit_hits"] = int(v)
                    elif k == "oom_kill":
                        out["oom_kill"] = int(v)
        except (OSError, ValueError):
            pass
        return out

    def sample(self):
        u = self.usage()
        self._peak = max(self._peak, u)
        return u

    def _empty_and_remove(self):
        """move any member to the parent group, drop the charge, remove"""
        parent = os.path.dirname(self.path)
        for pid in self.pids():
            try:
                _write(os.path.join(parent, "cgroup.procs"), str(pid))
            except OSError:
                pass
        if self.kind == "v1":
            try:
                _write(os.path.join(self.path, "memory.force_empty"), "0")
            except OSError:
                pass
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)

    def remove(self):
        if self.freezer and os.path.isdir(self.freezer):
            try:
                self.thaw()
            except (OSError, RuntimeError):
                pass
            _remove_group(self.freezer)
        if os.path.isdir(self.path):
            self._empty_and_remove()


def _remove_group(path):
    """a group with no controller state worth keeping (the v1 freezer's):
    thawed, members moved to the parent, removed"""
    try:
        _write(os.path.join(path, "freezer.state"), "THAWED")
    except OSError:
        pass
    parent = os.path.dirname(path)
    try:
        for pid in _read(os.path.join(path, "cgroup.procs")).split():
            try:
                _write(os.path.join(parent, "cgroup.procs"), pid)
            except OSError:
                pass
    except OSError:
        pass
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.1)
