"""benchlib -- shared helpers for the tides-vs-heap PostgreSQL benchmarks.

Every comparison script (pgbench_std.py, oltp_idx.py, copy_load.py) uses this
module to:

  * create a throwaway cluster (the shared harness, test/harness/pgcluster.py:
    initdb as the postgres user, private socket directory, unix socket only)
    on a loop device, and remove it again on exit, error, Ctrl-C or SIGTERM;
  * run pgbench with per-transaction logs and compute p50/p95/p99;
  * measure bytes written to the device: each cluster's data directory is
    an ext4 filesystem on its own loop device, whose sector counter
    (/sys/block/loopN/stat) counts data, WAL, engine files and filesystem
    journal of that cluster alone.  The sum of /proc/PID/io write_bytes over
    the postmaster and its children (Linux folds a reaped child's counters
    into its parent, so exited backends are included) is recorded beside
    it; bench/pg/README.md shows why it is not the headline number (it
    charges whole page-cache folios and overstates fsync-heavy writers);
  * sample peak memory (sum of RSS and of PSS over the same processes; RSS
    counts shared memory once per process, PSS divides it among them, so
    PSS is the real footprint);
  * measure sizes (heap: relation files of the tables, indexes and TOAST;
    tides: the cluster's *.sst files after tides_flush()/tides_compact(),
    plus relation files such as the nbtree indexes of tides tables);
  * write CSV rows and machine information.

Python 3 standard library only (the charts in report.py use matplotlib).
"""

import atexit
import csv
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
RESULTS = os.environ.get("BENCH_RESULTS", os.path.join(ROOT, "bench", "results"))
sys.path.insert(0, os.path.join(ROOT, "test", "harness"))
import pgcluster  # noqa: E402


# the private installation that bench/pg/run.sh made (PG_BINDIR / TIDES_PG_BINDIR),
# else one of this tree, made now (test/harness)
PG_BIN = pgcluster.bindir(need_tidesam=True)
IS_ROOT = os.geteuid() == 0
SO_SEEN = set()   # sha256 of the tidesam.so each cluster started with


def tidesam_so():
    r = subprocess.run([os.path.join(PG_BIN, "pg_config"), "--pkglibdir"], capture_output=True, text=True)
    return os.path.join(r.stdout.strip() or "/usr/lib/postgresql/15/lib", "tidesam.so")


def so_hash():
    import hashlib
    try:
        with open(tidesam_so(), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        return "missing"


def log(msg):
    print("[bench %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def env_int(name, default):
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else default


def env_float(name, default):
    v = os.environ.get(name)
    return float(v) if v not in (None, "") else default


def env_list(name, default):
    v = os.environ.get(name)
    if v in (None, ""):
        return list(default)
    return [x.strip() for x in v.split(",") if x.strip()]


# --------------------------------------------------------------------------
# cleanup on exit and on signals

_CLUSTERS = []


def _cleanup_all():
    for c in list(_CLUSTERS):
        try:
            c.destroy()
        except Exception as e:  # pragma: no cover - best effort
            print("cleanup of %s failed: %s" % (c.dir, e), file=sys.stderr)


def _on_signal(signum, frame):
    # turn SIGTERM/SIGHUP into an exception so finally blocks run
    raise SystemExit(128 + signum)


atexit.register(_cleanup_all)
signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGHUP, _on_signal)


# --------------------------------------------------------------------------
# /proc helpers


process_tree = pgcluster.process_tree


def read_io(pid):
    """dict of /proc/PID/io, or None if the process is gone"""
    try:
        with open("/proc/%d/io" % pid) as f:
            return {k: int(v) for k, v in (l.split(": ") for l in f.read().splitlines() if l)}
    except (OSError, ValueError):
        return None


def read_mem(pid):
    """(rss_kb, pss_kb) from smaps_rollup, or None"""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            txt = f.read()
    except OSError:
        return None
    rss = pss = 0
    for line in txt.splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1])
        elif line.startswith("Pss:"):
            pss = int(line.split()[1])
    return rss, pss


class MemSampler(threading.Thread):
    """samples sum(RSS) and sum(PSS) of the server's processes"""

    def __init__(self, cluster, interval=0.5):
        super().__init__(daemon=True)
        self.cluster = cluster
        self.interval = interval
        self.peak_rss_kb = 0
        self.peak_pss_kb = 0
        self._halt = threading.Event()

    def sample(self):
        pm = self.cluster.postmaster_pid()
        if pm is None:
            return
        rss = pss = 0
        for p in process_tree(pm):
            m = read_mem(p)
            if m:
                rss += m[0]
                pss += m[1]
        self.peak_rss_kb = max(self.peak_rss_kb, rss)
        self.peak_pss_kb = max(self.peak_pss_kb, pss)

    def run(self):
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.interval)

    def stop(self):
        self._halt.set()
        self.join()
        self.sample()


# --------------------------------------------------------------------------
# the throwaway cluster

# (the harness adds listen_addresses = '', the socket and the preload of tidesam)
BASE_CONF = {
    "max_connections": "100",
    "shared_buffers": "256MB",
    "max_wal_size": "8GB",
    "min_wal_size": "1GB",
    "checkpoint_timeout": "30min",
    "wal_buffers": "16MB",
    "synchronous_commit": "off",
    "fsync": "on",
    "tides.memtable_size": "64MB",
    "tides.block_cache_size": "256MB",
    "tides.sync_mode": "none",
    "tides.compression": "lz4",
    "logging_collector": "off",
    "log_min_messages": "warning",
    "log_checkpoints": "off",
    "max_parallel_workers_per_gather": "0",
    "jit": "off",
}


PORT_RANGE = (56300, 56399)   # the ports this project's benchmarks may use on the shared machine


def pick_port():
    """a port of PORT_RANGE (BENCH_PORTS=lo-hi overrides it); the socket
    lives in the cluster's own directory, so the number only names it"""
    lo, hi = PORT_RANGE
    if os.environ.get("BENCH_PORTS"):
        lo, hi = (int(x) for x in os.environ["BENCH_PORTS"].split("-"))
    return pgcluster.pick_port(lo, hi)


class Cluster(pgcluster.Cluster):
    """a throwaway cluster.  Its data directory lives on a private ext4
    filesystem on a loop device (when running as root and a loop device is
    free; BENCH_LOOP=0 turns this off), so the bytes the cluster writes to
    its device can be read from /sys/block/loopN/stat: data, WAL, engine
    files, filesystem metadata and journal, and nothing of anyone else's.
    Logs (server log, pgbench logs) stay outside that filesystem."""

    def __init__(self, name, conf=None):
        base = os.environ.get("BENCH_DIR") or "/var/tmp"
        os.makedirs(base, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="tidesam-bench-%s." % name, dir=base)
        os.chmod(self.dir, 0o755)
        self.mnt = os.path.join(self.dir, "mnt")
        os.makedirs(self.mnt)
        super().__init__(self.dir, port=pick_port(), data=os.path.join(self.mnt, "data"), sock=self.dir,
                         bin_dir=PG_BIN)
        self.conf = dict(BASE_CONF)
        self.conf.update(conf or {})
        self.started = False
        self.loopdev = None
        self.img = None
        _CLUSTERS.append(self)
        if IS_ROOT and os.environ.get("BENCH_LOOP", "1") != "0":
            self._mount_loop()
        if IS_ROOT:
            for d in (self.dir, self.mnt):
                pgcluster.chown_tree(d)

    def _mount_loop(self):
        size = os.environ.get("BENCH_LOOP_SIZE", "48G")
        self.img = self.dir + ".img"
        try:
            subprocess.run(["truncate", "-s", size, self.img], check=True)
            dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", self.img], check=True,
                                 capture_output=True, text=True).stdout.strip()
            self.loopdev = os.path.basename(dev)
            # no lazy init: nothing may write in the background later
            subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", "-i", "1048576",
                            "-E", "lazy_itable_init=0,lazy_journal_init=0", dev], check=True,
                           stdout=subprocess.DEVNULL)
            subprocess.run(["mount", "-o", "noatime", dev, self.mnt], check=True)
        except (subprocess.CalledProcessError, OSError) as e:
            log("no loop device for %s (%s): device bytes fall back to /proc/PID/io" % (self.dir, e))
            self._unmount_loop()

    def _unmount_loop(self):
        if self.loopdev:
            if subprocess.run(["umount", self.mnt], stderr=subprocess.DEVNULL).returncode != 0:
                subprocess.run(["umount", "-l", self.mnt], stderr=subprocess.DEVNULL)
            subprocess.run(["losetup", "-d", "/dev/" + self.loopdev], stderr=subprocess.DEVNULL)
            self.loopdev = None
        if self.img and os.path.exists(self.img):
            os.unlink(self.img)
        self.img = None

    def device_bytes(self):
        """sectors written to this cluster's loop device, in bytes (None
        without a loop device).  Call syncfs() first: dirty page cache has
        not reached the device yet."""
        if not self.loopdev:
            return None
        with open("/sys/block/%s/stat" % self.loopdev) as f:
            return int(f.read().split()[6]) * 512

    def syncfs(self):
        subprocess.run(["sync", "-f", self.mnt if self.loopdev else self.data], check=False)

    # -- running things as the server's user (a subclass may wrap them)
    def _as_pg(self, cmd):
        return pgcluster.as_user(cmd)

    def as_user(self, cmd):
        return self._as_pg(cmd)

    def env(self, pgoptions=None):
        """a client's environment (PGHOST, PGPORT, PGUSER; PGOPTIONS if given)"""
        return self.client_env({"PGOPTIONS": pgoptions} if pgoptions else None)

    def initdb(self):
        super().initdb(self.conf)
        return self

    def start(self):
        for attempt in range(5):
            try:
                super().start(timeout=120)
                break
            except RuntimeError:
                # port clash on the SysV key: try another port
                self.port = pick_port()
                self._rewrite_port()
        else:
            raise RuntimeError("server did not start:\n" + self.tail_log())
        self.started = True
        SO_SEEN.add(so_hash())
        return self

    def _rewrite_port(self):
        path = os.path.join(self.data, "postgresql.conf")
        with open(path) as f:
            txt = f.read()
        txt = re.sub(r"(?m)^port = \d+$", "port = %d" % self.port, txt)
        with open(path, "w") as f:
            f.write(txt)

    def stop(self, mode="fast"):
        if not self.started:
            return
        super().stop(mode)
        self.started = False

    def destroy(self):
        if self in _CLUSTERS:
            _CLUSTERS.remove(self)
        if self.started or os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.started = True
            self.stop("immediate")
        if os.environ.get("BENCH_KEEP") == "1":
            log("keeping %s (loop device %s stays mounted)" % (self.dir, self.loopdev))
            return
        self._unmount_loop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def tail_log(self, n=30):
        try:
            with open(self.logfile) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def server_pids(self):
        pm = self.postmaster_pid()
        return process_tree(pm) if pm else []

    def io_totals(self):
        """summed /proc/PID/io over the server; see the module docstring"""
        tot = {"write_bytes": 0, "read_bytes": 0, "cancelled_write_bytes": 0, "wchar": 0}
        for p in self.server_pids():
            io = read_io(p)
            if io:
                for k in tot:
                    tot[k] += io.get(k, 0)
        return tot

    # -- SQL
    def psql(self, sql, db="postgres", pgoptions=None, check=True):
        """runs one statement, or a list of them (one psql, one backend)"""
        cmds = []
        for q in ([sql] if isinstance(sql, str) else sql):
            cmds += ["-c", q]
        r = subprocess.run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-d", db] + cmds,
                           env=self.env(pgoptions), capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError("psql failed (%s): %s\n%s" % (db, str(sql)[:300], r.stderr))
        return r.stdout.strip()

    def psql_file(self, path, db="postgres", pgoptions=None):
        r = subprocess.run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db,
                            "-f", path], env=self.env(pgoptions), capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("psql -f %s failed: %s" % (path, r.stderr))
        return r.stdout

    def set_conf(self, **kw):
        """ALTER SYSTEM + reload (for SIGHUP and user settings)"""
        for k, v in kw.items():
            self.psql("ALTER SYSTEM SET %s = '%s'" % (k.replace("__", "."), v))
        self.psql("SELECT pg_reload_conf()")
        time.sleep(0.3)

    def create_db(self, db):
        self.psql("DROP DATABASE IF EXISTS %s" % db)
        self.psql("CREATE DATABASE %s" % db)
        self.psql("CREATE EXTENSION IF NOT EXISTS tidesam", db=db)

    def has_tides_btree(self, db):
        """(index AM tides_btree exists, setting tides.index_method exists)"""
        r = self.psql("SELECT exists(SELECT 1 FROM pg_am WHERE amname = 'tides_btree'), "
                      "exists(SELECT 1 FROM pg_settings WHERE name = 'tides.index_method')", db=db)
        am, guc = r.split("|")
        return am == "t", guc == "t"

    def wal_stats(self):
        r = self.psql("SELECT wal_records, wal_fpi, wal_bytes FROM pg_stat_wal")
        a = r.split("|")
        return {"wal_records": int(a[0]), "wal_fpi": int(a[1]), "wal_bytes": int(a[2])}

    def tides_stats(self, db):
        out = {}
        for line in self.psql("SELECT name, value FROM tides_stats()", db=db).splitlines():
            k, v = line.split("|")
            out[k] = int(v)
        return out

    def settle(self, db):
        """write out deferred work: heap's dirty pages (CHECKPOINT) and the
        tides memtable (tides_flush) plus any compaction that is due, then
        syncfs so it has all reached the device"""
        t0 = time.time()
        self.psql(["CHECKPOINT", "SELECT tides_flush()", "SELECT tides_compact()", "CHECKPOINT"], db=db)
        self.wait_engine_quiet()
        self.syncfs()
        time.sleep(0.2)  # let the postmaster reap the backend we used
        self.settled = True
        self.settle_s = getattr(self, "settle_s", 0.0) + time.time() - t0

    def _sst_listing(self):
        d = os.path.join(self.data, "pg_tides")
        out = []
        try:
            for fn in sorted(os.listdir(d)):
                if fn.endswith(".sst"):
                    try:
                        out.append((fn, os.stat(os.path.join(d, fn)).st_size))
                    except OSError:
                        pass
        except OSError:
            pass
        return out

    def wait_engine_quiet(self, timeout=60.0):
        """wait until the engine's SSTable files stop changing.
        tides_compact() runs the compactions that are due in the calling
        backend, but a compaction worker may be in the middle of one of its
        own: its inputs and its half-written outputs are both on disk then
        (seen: 286 MB of files for a table whose data is 182 MB), which would
        overstate the size and leave its writes to the next run's bytes.
        Three equal listings 0.3 s apart count as quiet; a cluster with no
        SSTable files (heap's) returns at once."""
        last, same, t0 = self._sst_listing(), 0, time.time()
        if not last:
            return
        while same < 2 and time.time() - t0 < timeout:
            time.sleep(0.3)
            cur = self._sst_listing()
            same = same + 1 if cur == last else 0
            last = cur
        if same < 2:
            log("engine files of %s still changing after %.0f s; measuring anyway" % (self.dir, timeout))

    def snapshot(self, db, tables=None):
        """WAL and tides engine counters, and the size of tables, in one query"""
        q = ("SELECT json_build_object('wal', (SELECT row_to_json(w) FROM pg_stat_wal w), "
             "'tides', (SELECT json_object_agg(name, value) FROM tides_stats())")
        if tables:
            q += ", 'size', (%s)" % self._size_query(tables)
        out = json.loads(self.psql(q + ")", db=db))
        res = {"wal": out["wal"], "tides": out["tides"], "size": None}
        if tables:
            files, has_tides = out["size"]["f"], out["size"]["t"]
            res["size"] = int(files) + (self.sst_bytes() if has_tides else 0)
        return res

    def sst_bytes(self):
        """bytes of the engine's table files (*.sst) under pg_tides: the
        tides data of every table in this cluster (logs, MANIFEST and
        CURRENT are not counted, as heap's WAL is not).  Each benchmark
        cluster holds one workload's tables, so this is their size.
        (tides_relation_size() is not used: it counts every SSTable whose key
        range overlaps the relation's, plus all memtables, so small tables
        that share files with large ones are over-counted.)"""
        total = 0
        d = os.path.join(self.data, "pg_tides")
        try:
            names = os.listdir(d)
        except OSError:
            return 0
        for fn in names:
            if fn.endswith(".sst"):
                try:
                    total += os.stat(os.path.join(d, fn)).st_size
                except OSError:
                    pass
        return total

    def _size_query(self, tables):
        tlist = ",".join("'%s'::regclass" % t for t in tables)
        return """
WITH t AS (SELECT oid FROM pg_class WHERE oid IN (%s)),
rels AS (
  SELECT oid FROM t
  UNION SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT oid FROM t)
  UNION SELECT reltoastrelid FROM pg_class WHERE oid IN (SELECT oid FROM t) AND reltoastrelid <> 0
  UNION SELECT indexrelid FROM pg_index WHERE indrelid IN
        (SELECT reltoastrelid FROM pg_class WHERE oid IN (SELECT oid FROM t) AND reltoastrelid <> 0))
SELECT json_build_object(
  'f', coalesce(sum(pg_relation_size(c.oid, 'main') + pg_relation_size(c.oid, 'fsm')
                  + pg_relation_size(c.oid, 'vm') + pg_relation_size(c.oid, 'init')), 0),
  't', coalesce(bool_or(a.amname LIKE 'tides%%'), false))
FROM pg_class c JOIN rels r ON r.oid = c.oid LEFT JOIN pg_am a ON a.oid = c.relam
""" % tlist

    def size_of(self, db, tables):
        """bytes of the given tables with their indexes and TOAST: relation
        files (all forks; nbtree indexes of tides tables live there) plus,
        if any of them is stored by tides, the cluster's SSTable bytes"""
        out = json.loads(self.psql(self._size_query(tables), db=db))
        return int(out["f"]) + (self.sst_bytes() if out["t"] else 0)

    def du(self, sub):
        total = 0
        for dp, dn, fn in os.walk(os.path.join(self.data, sub)):
            for f in fn:
                try:
                    total += os.stat(os.path.join(dp, f)).st_blocks * 512
                except OSError:
                    pass
        return total


# --------------------------------------------------------------------------
# pgbench


def percentile(sorted_vals, p):
    if not sorted_vals:
        return float("nan")
    k = (len(sorted_vals) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (k - lo)


def read_latencies(prefix_dir):
    """latencies in microseconds from pgbench per-transaction logs"""
    vals = []
    for fn in os.listdir(prefix_dir):
        if not fn.startswith("pgb"):
            continue
        with open(os.path.join(prefix_dir, fn)) as f:
            for line in f:
                parts = line.split(" ", 3)
                if len(parts) > 2 and parts[2].isdigit():
                    vals.append(int(parts[2]))
    vals.sort()
    return vals


def run_pgbench(cluster, db, args, duration, clients, pgoptions=None, threads=None, label="run"):
    """runs pgbench -n -T duration -c clients ... args; returns a dict with
    tps, txns, failed, latency percentiles (ms)"""
    threads = threads or max(1, min(clients, os.cpu_count() or 2))
    logdir = tempfile.mkdtemp(prefix="pgblog.", dir=cluster.dir)
    cmd = [os.path.join(PG_BIN, "pgbench"), "-n", "-T", str(duration), "-c", str(clients), "-j", str(threads),
           "-l", "--log-prefix=%s/pgb" % logdir] + list(args) + [db]
    r = subprocess.run(cmd, env=cluster.env(pgoptions), capture_output=True, text=True, cwd=logdir)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        shutil.rmtree(logdir, ignore_errors=True)
        raise RuntimeError("pgbench failed (%s): %s\n%s" % (label, " ".join(cmd), out[-3000:]))
    m = re.search(r"number of transactions actually processed: (\d+)", out)
    txns = int(m.group(1)) if m else 0
    m = re.search(r"number of failed transactions: (\d+)", out)
    failed = int(m.group(1)) if m else 0
    m = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out)
    tps = float(m.group(1)) if m else float("nan")
    lat = read_latencies(logdir)
    shutil.rmtree(logdir, ignore_errors=True)
    res = {"tps": tps, "txns": txns, "failed": failed,
           "lat_avg_ms": (sum(lat) / len(lat) / 1000.0) if lat else float("nan"),
           "p50_ms": percentile(lat, 50) / 1000.0, "p95_ms": percentile(lat, 95) / 1000.0,
           "p99_ms": percentile(lat, 99) / 1000.0}
    return res


# --------------------------------------------------------------------------
# one measured point


TIDES_STAT_KEYS = ["log_bytes_written", "log_syncs", "flush_bytes_written", "compaction_bytes_written",
                   "compactions", "stall_count", "slowdown_count", "slowdown_us", "cache_hits",
                   "cache_misses", "user_bytes_written", "publish_waits", "publish_wait_us",
                   "log_sync_requests", "vacant_ranges", "vacant_jumps", "writes"]


def measured(cluster, db, work, tables=None, settle=True):
    """runs work() (which returns a dict with at least 'txns') with device
    bytes, WAL, tides engine and memory accounting around it.

    dev_bytes_run   bytes written to the cluster's own device during work(),
                    after a syncfs of its filesystem (so the page cache the
                    work dirtied is counted)
    dev_bytes       the same plus the deferred writes the work left behind:
                    CHECKPOINT (heap's dirty pages), tides_flush() and
                    tides_compact() (the engine's memtable and due
                    compactions), syncfs.  The honest per-transaction cost.
    proc_write_bytes  sum of /proc/PID/io write_bytes over the server
                    processes, settled like dev_bytes.  Kept for reference
                    only: with this kernel's large page-cache folios a
                    process is charged the whole folio (up to 2 MB) each
                    time it dirties a clean one, e.g. after every fsync, so
                    it overstates small synced writes by orders of magnitude.
    Without a loop device dev_bytes* fall back to proc_write_bytes.
    """
    if settle and not getattr(cluster, "settled", False):
        cluster.settle(db)
    else:
        cluster.syncfs()
    s0 = cluster.snapshot(db, tables)
    d0 = cluster.device_bytes()
    io0 = cluster.io_totals()
    cluster.settled = False
    sampler = MemSampler(cluster)
    sampler.start()
    t0 = time.time()
    try:
        res = work()
    finally:
        sampler.stop()
    elapsed = time.time() - t0
    cluster.syncfs()
    time.sleep(0.2)
    d1 = cluster.device_bytes()
    io1 = cluster.io_totals()
    w1 = cluster.snapshot(db)["wal"]
    if settle:
        cluster.settle(db)
    d2 = cluster.device_bytes()
    io2 = cluster.io_totals()
    s2 = cluster.snapshot(db, tables)
    wal0, wal1, ts0, ts1 = s0["wal"], w1, s0["tides"], s2["tides"]
    size_before, size_after = s0["size"], s2["size"]
    txns = max(1, res.get("txns", 1))
    if d0 is None:
        d0, d1, d2 = io0["write_bytes"], io1["write_bytes"], io2["write_bytes"]
    res.update({
        "elapsed_s": round(elapsed, 3),
        "dev_bytes_run": d1 - d0,
        "dev_bytes": d2 - d0,
        "bytes_per_txn_run": round((d1 - d0) / txns, 1),
        "bytes_per_txn": round((d2 - d0) / txns, 1),
        "proc_write_bytes": io2["write_bytes"] - io0["write_bytes"],
        "device": ("loop:" + cluster.loopdev) if cluster.loopdev else "proc_io",
        "wal_bytes": wal1["wal_bytes"] - wal0["wal_bytes"],
        "wal_fpi": wal1["wal_fpi"] - wal0["wal_fpi"],
        "wal_syncs": wal1.get("wal_sync", 0) - wal0.get("wal_sync", 0),
        "peak_rss_mb": round(sampler.peak_rss_kb / 1024.0, 1),
        "peak_pss_mb": round(sampler.peak_pss_kb / 1024.0, 1),
        "size_before": size_before,
        "size_after": size_after,
    })
    for k in TIDES_STAT_KEYS:
        res["tides_" + k] = ts1.get(k, 0) - ts0.get(k, 0)
    # device flushes of a log (the WAL's and the engine's) per transaction
    flushes = res["wal_syncs"] + res["tides_log_syncs"]
    res["commits_per_flush"] = round(txns / flushes, 2) if flushes > 0 else ""
    # engine writes (batches) per transaction: what publication and the log pay per commit
    res["writes_per_txn"] = round(res["tides_writes"] / txns, 2) if txns > 0 and res["tides_writes"] else ""
    return res


# --------------------------------------------------------------------------
# engines, durability


class Engine:
    """one storage configuration: a database whose tables use it"""

    def __init__(self, name, table_am, index_method=None, unlogged=False, has_guc=False,
                 conf=None, workloads=None):
        self.name = name
        self.table_am = table_am
        self.index_method = index_method
        self.unlogged = unlogged
        # settings of this engine's cluster on top of the run's (tides_ownlog:
        # tides.wal = off), and the workloads it runs (None: all)
        self.conf = conf or {}
        self.workloads = workloads
        # tides.index_method makes the indexes that pgbench -i and ADD PRIMARY
        # KEY create use tides_btree; without the setting only statements that
        # name the method (CREATE INDEX ... USING tides_btree) can use it
        self.has_guc = has_guc

    @property
    def index_am(self):
        """the index method this engine's indexes use (for the CSV)"""
        return self.index_method or "btree"

    @property
    def is_tides(self):
        return self.table_am == "tides"

    def init_options(self):
        opts = "-c default_table_access_method=%s" % self.table_am
        if self.index_method and self.has_guc:
            opts += " -c tides.index_method=%s" % self.index_method
        return opts

    def durability_options(self, durability):
        """per-session settings for a durability level (tides.sync_mode is
        set cluster-wide by set_durability)"""
        if durability == "strict":
            return "-c synchronous_commit=on"
        return "-c synchronous_commit=off"


def start_clusters(name, conf=None, default_engines=("heap", "tides", "tides_btree")):
    """one throwaway cluster per engine, identical settings, all running:
    each engine's device bytes, memory and sizes are then its own (no
    checkpoint, autovacuum or compaction of the other engine's data lands
    in its numbers).  Returns (engines, {engine name: Cluster}, note).

    Engines: heap, tides, and tides with tides_btree indexes when that index
    AM exists; BENCH_ENGINES (default: default_engines) restricts the list."""
    want = env_list("BENCH_ENGINES", default_engines)
    probe = Cluster("%s-tides" % name, conf).initdb().start()
    probe.psql("CREATE EXTENSION IF NOT EXISTS tidesam")
    # tides: the default, changes in PostgreSQL's WAL (tides.wal = on);
    # tides_ownlog: the engine's own log (tides.wal = off, tides.sync_mode),
    # on the tpcb-like points only, where the two logs differ most
    all_engines = [Engine("heap", "heap"), Engine("tides", "tides"),
                   Engine("tides_ownlog", "tides", conf={"tides.wal": "off"}, workloads=("tpcb-like",))]
    note = None
    has_am, has_guc = probe.has_tides_btree("postgres")
    if has_am:
        all_engines.append(Engine("tides_btree", "tides", index_method="tides_btree", has_guc=has_guc))
        note = ("index AM tides_btree present: engine 'tides' = tides tables with PostgreSQL's btree "
                "indexes, engine 'tides_btree' = tides tables with tides_btree indexes (%s)" %
                ("set through tides.index_method" if has_guc else
                 "no tides.index_method setting: only indexes created with USING tides_btree"))
    else:
        note = ("index AM tides_btree not present in this build: engine 'tides' = tides tables with "
                "PostgreSQL's btree (nbtree) indexes; the tides_btree points are skipped")
    engines = [e for e in all_engines if e.name in want]
    clusters = {}
    for e in engines:
        if e.name == "tides" and probe is not None:
            clusters[e.name] = probe
            probe = None
        else:
            clusters[e.name] = Cluster("%s-%s" % (name, e.name), dict(conf or {}, **e.conf)).initdb().start()
    if probe is not None:
        probe.destroy()
    return engines, clusters, note


def destroy_clusters(clusters):
    for c in clusters.values():
        c.destroy()


def set_durability(cluster, durability):
    """relaxed: heap synchronous_commit=off vs tides.sync_mode=none;
    strict: heap synchronous_commit=on vs tides.sync_mode=full"""
    cluster.set_conf(tides__sync_mode="full" if durability == "strict" else "none",
                     synchronous_commit="on" if durability == "strict" else "off")


# --------------------------------------------------------------------------
# output


class CsvOut:
    def __init__(self, path, fields):
        self.path = path
        self.fields = fields
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.f = open(path, "w", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=fields, extrasaction="ignore")
        self.w.writeheader()
        self.f.flush()

    def row(self, d):
        self.w.writerow({k: _fmt(d.get(k)) for k in self.fields})
        self.f.flush()

    def close(self):
        self.f.close()


def _fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return "%.4g" % v if abs(v) < 1e6 else "%.0f" % v
    return v


def flush_note(res):
    """", N commits per log flush" (strict points), ", publish waits ..." (tides)"""
    s = ""
    if res.get("durability") == "strict" and res.get("commits_per_flush") != "":
        s += ", %s commits per log flush" % res["commits_per_flush"]
    if res.get("writes_per_txn"):
        s += ", %s engine writes per transaction" % res["writes_per_txn"]
    if res.get("tides_publish_waits"):
        s += ", %d publish waits (%.0f ms)" % (res["tides_publish_waits"], res["tides_publish_wait_us"] / 1000.0)
    return s


COMMON_FIELDS = ["suite", "workload", "scale", "durability", "clients", "protocol", "engine", "index_am", "rep", "duration_s",
                 "tps", "txns", "failed", "lat_avg_ms", "p50_ms", "p95_ms", "p99_ms",
                 "bytes_per_txn", "bytes_per_txn_run", "dev_bytes", "dev_bytes_run", "proc_write_bytes", "device",
                 "wal_bytes", "wal_fpi", "wal_syncs", "commits_per_flush", "writes_per_txn",
                 "size_before", "size_after", "peak_rss_mb", "peak_pss_mb"] + \
                ["tides_" + k for k in TIDES_STAT_KEYS] + ["elapsed_s", "check", "plan", "note"]


def huge_pages_info():
    """the system's huge pages for shared memory: transparent (shmem_enabled) and hugetlb (reserved)"""
    thp = "?"
    try:
        with open("/sys/kernel/mm/transparent_hugepage/shmem_enabled") as f:
            m = re.search(r"\[(\w+)\]", f.read())
            thp = m.group(1) if m else "?"
    except OSError:
        pass
    with open("/proc/meminfo") as f:
        m = re.search(r"HugePages_Total:\s*(\d+)", f.read())
    return "transparent huge pages for shared memory: %s; hugetlb pages reserved: %s" % (
        thp, m.group(1) if m else "?")


def machine_info(path_for_disk=None):
    info = {}
    info["nproc"] = os.cpu_count()
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
            info["cpu"] = m.group(1).strip() if m else platform.processor()
    except OSError:
        info["cpu"] = platform.processor()
    with open("/proc/meminfo") as f:
        m = re.search(r"MemTotal:\s*(\d+)", f.read())
        info["ram_gb"] = round(int(m.group(1)) / 1024 / 1024, 1)
    info["kernel"] = platform.release()
    info["huge_pages"] = huge_pages_info()
    disk = ""
    try:
        p = path_for_disk or "/var/tmp"
        src = subprocess.run(["findmnt", "-n", "-o", "SOURCE,FSTYPE", "-T", p], capture_output=True,
                             text=True).stdout.strip()
        dev = src.split()[0] if src else ""
        name = os.path.basename(dev)
        rota = ""
        try:
            with open("/sys/block/%s/queue/rotational" % re.sub(r"p?\d+$", "", name) if not
                      os.path.exists("/sys/block/%s" % name) else "/sys/block/%s/queue/rotational" % name) as f:
                rota = "rotational" if f.read().strip() == "1" else "non-rotational"
        except OSError:
            pass
        size = subprocess.run(["lsblk", "-dn", "-o", "SIZE", dev], capture_output=True, text=True).stdout.strip()
        disk = "%s (%s, %s, reported %s)" % (dev, src.split()[1] if len(src.split()) > 1 else "?", size, rota)
        if name.startswith("vd"):
            disk += ", virtio block device of a VM"
    except Exception:
        pass
    info["disk"] = disk
    r = subprocess.run([os.path.join(PG_BIN, "postgres"), "--version"], capture_output=True, text=True)
    info["postgres"] = r.stdout.strip()
    try:
        info["tidesam_commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "src"],
                               capture_output=True, text=True).stdout.strip()
        if dirty:
            info["tidesam_commit"] += " (+ uncommitted changes in src/)"
    except Exception:
        pass
    if os.environ.get("BENCH_TIDESAM_LABEL"):
        info["tidesam_commit"] = os.environ["BENCH_TIDESAM_LABEL"]
    info["tidesam_so"] = "%s (sha256 %s)" % (tidesam_so(), so_hash())
    info["loadavg"] = open("/proc/loadavg").read().split()[:3]
    info["date"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    return info


def write_meta(prefix, suite, meta):
    meta["tidesam_so_sha256_seen"] = sorted(SO_SEEN)
    path = os.path.join(RESULTS, "%s%s.meta.json" % (prefix, suite))
    os.makedirs(RESULTS, exist_ok=True)
    with open(path, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


def point_engines(engines, clients, workload=None):
    """the engines a point runs: heap and tides at every point; the
    tides_btree variant (an index-AM comparison on top of tides) only at
    the client counts in BENCH_VARIANT_CLIENTS (default 4), which keeps the
    1-4-16 client sweep of heap against tides inside make bench's budget;
    an engine limited to some workloads only at those"""
    want = [int(c) for c in env_list("BENCH_VARIANT_CLIENTS", ["4"])]
    return [e for e in engines if (e.index_method is None or clients in want) and
            (e.workloads is None or workload in e.workloads)]


PROTOCOLS = ("simple", "prepared")


def protocol_args(protocol):
    """pgbench's query protocol: simple (the default) or prepared (-M
    prepared: parse and plan once per connection, so the access method's own
    cost is most of each statement)"""
    if protocol not in PROTOCOLS:
        raise ValueError("unknown protocol %r (simple or prepared)" % protocol)
    return ["-M", "prepared"] if protocol == "prepared" else []


def point_duration(duration, clients):
    """seconds per run of a point: the 4-client points, which the targets
    judge, run `duration`; the rest of the 1-4-16 sweep runs
    BENCH_SWEEP_DURATION (default one second less), for make bench's budget"""
    if clients == 4:
        return duration
    return env_int("BENCH_SWEEP_DURATION", max(1, duration - 1))


def rep_order(engines, rep):
    """alternate which engine goes first, so drift does not favour one"""
    return list(engines) if rep % 2 == 1 else list(reversed(engines))


def summarize(vals):
    vals = [v for v in vals if v is not None and v == v]
    if not vals:
        return None, None, None
    return statistics.median(vals), min(vals), max(vals)
