#!/usr/bin/env python3
"""pgcluster -- the one throwaway-cluster harness of tidesam's tests and benchmarks.

Every shell and Python test or benchmark that starts a PostgreSQL server uses
this file: Python scripts import it, shell scripts call its command line
(test/harness/cluster.sh defines `pgc` for them).  See test/harness/README.md.

What it owns:
  * the private installation: a copy of the installed PostgreSQL
    (bindir/.., pkglibdir, sharedir; PostgreSQL finds its lib and share
    directories relative to its binaries) with this tree's tidesam installed
    on top by `make install DESTDIR=...`, so no test touches the system
    directories and two checkouts can test at once (`install`, `bindir`);
  * the server user: as root, initdb and the server run as TIDES_TEST_USER
    (default postgres, created if missing), since PostgreSQL refuses root.
    Every command run as that user runs in the cluster's own directory (or
    /), never in the caller's working directory, which that user may not be
    able to enter (a clone under a mode-700 home, issue 17);
  * a cluster: initdb, postgresql.conf (unix socket in the cluster
    directory only, no TCP; tidesam preloaded unless told otherwise;
    test/regress.conf on request), start / stop / restart / kill -9 of the
    postmaster and all its children (by pid, never by name), psql, the server
    log and the lines in it that no test may show.

Command line (the cluster's settings are kept in DIR/cluster.json):
  pgcluster.py install [--dest DIR] [--src TREE] [--no-build]
                                       build, install privately, print the bindir
  pgcluster.py bindir [--tidesam]      TIDES_PG_BINDIR, else (--tidesam) a private
                                       installation of this tree, else the system's
  pgcluster.py init DIR [--port N] [--no-preload] [--regress-conf] [--set 'K = V']...
                   [--conf FILE]... [--initdb-opts 'OPTS'] [--log FILE]
  pgcluster.py start DIR [--core] [--timeout S] [--log FILE]   (pg_ctl start -w)
  pgcluster.py stop DIR [--mode fast|immediate] [--timeout S]
                                       falls back to immediate, then kill -9 by pid
  pgcluster.py kill9 DIR               SIGKILL the postmaster and every child at once
  pgcluster.py destroy DIR...          stop (immediate) and remove (not with KEEP_CLUSTER set)
  pgcluster.py run DIR CMD...          CMD as the server user, in DIR, with PGHOST/PGPORT
  pgcluster.py psql DIR ARGS...        psql -X -q -v ON_ERROR_STOP=1 ARGS (as run does)
  pgcluster.py get DIR KEY             sock | port | data | log | bindir | user | dir
  pgcluster.py log-problems FILE...    print crash lines of server logs; exit 1 if any
  pgcluster.py user                    the server user (created if missing, as root)
  pgcluster.py chown PATH...           give PATHs (recursively) to the server user

Python 3 standard library only.
"""

import hashlib
import json
import os
import pwd
import random
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PG_MAJOR = os.environ.get("PG_MAJOR", "15")
# the installed server's pg_config: the private copy's pg_config finds no headers
SYSTEM_PG_CONFIG = os.environ.get("PG_CONFIG") or "/usr/lib/postgresql/%s/bin/pg_config" % PG_MAJOR
IS_ROOT = os.geteuid() == 0
RUN_USER = os.environ.get("TIDES_TEST_USER", "postgres") if IS_ROOT else pwd.getpwuid(os.getuid()).pw_name


def log(msg):
    print("[pgcluster] %s" % msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# the server user


def ensure_user():
    """The OS user that runs the servers; created as a system user if missing (as root)."""
    if not IS_ROOT:
        return RUN_USER
    try:
        pwd.getpwnam(RUN_USER)
    except KeyError:
        subprocess.check_call(["useradd", "--system", "--user-group", "--no-create-home",
                               "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", RUN_USER])
    return RUN_USER


def chown_tree(path):
    """Give path (recursively) to the server user; nothing unless root."""
    if not IS_ROOT:
        return
    pw = pwd.getpwnam(ensure_user())
    os.chown(path, pw.pw_uid, pw.pw_gid)
    if os.path.isdir(path) and not os.path.islink(path):
        for top, dirs, files in os.walk(path):
            for n in dirs + files:
                os.lchown(os.path.join(top, n), pw.pw_uid, pw.pw_gid)


def as_user(cmd):
    """cmd run as the server user (runuser as root; unchanged otherwise).
    Give the result a cwd the user can enter (Cluster.run does)."""
    if IS_ROOT:
        return ["runuser", "-u", RUN_USER, "--"] + list(cmd)
    return list(cmd)


def user_can_reach(path):
    """Can the server user read and traverse path?"""
    if not IS_ROOT:
        return os.access(path, os.R_OK | os.X_OK)
    return subprocess.run(as_user(["test", "-r", path, "-a", "-x", path]), cwd="/").returncode == 0


# --------------------------------------------------------------------------
# the private installation


def _pg_config(what, pg_config=SYSTEM_PG_CONFIG):
    return subprocess.check_output([pg_config, what], text=True).strip()


def system_bindir():
    return _pg_config("--bindir")


def default_install_dir(src=ROOT):
    """build/pg-private in the tree when the server user can reach it; else
    (a clone under a mode-700 directory) /var/tmp under a name derived from
    the tree's path, so that two checkouts never share one."""
    d = os.path.join(src, "build", "pg-private")
    os.makedirs(d, exist_ok=True)
    if user_can_reach(d):
        return d
    tag = hashlib.sha1(os.path.realpath(src).encode()).hexdigest()[:12]
    return "/var/tmp/tidesam-pg.%s" % tag


def install(dest=None, src=ROOT, build=True, quiet=True):
    """Build tidesam in src (make) and install it into a private copy of the
    installed PostgreSQL under dest; returns the copy's bindir.  The copy of
    the server is refreshed when the installed server changes."""
    import fcntl
    dest = os.path.abspath(dest or default_install_dir(src))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest + ".lock", "w") as lock:     # one install into dest at a time
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _install(dest, src, build, quiet)


def _install(dest, src, build, quiet):
    bindir, pkglibdir, sharedir = (_pg_config(w) for w in ("--bindir", "--pkglibdir", "--sharedir"))
    out = subprocess.DEVNULL if quiet else None
    if build:
        subprocess.run(["make", "-s", "-j%d" % (os.cpu_count() or 2)], cwd=src, check=True, stdout=out)
    want = "%s %d" % (subprocess.check_output([os.path.join(bindir, "postgres"), "--version"], text=True).strip(),
                      int(os.stat(os.path.join(bindir, "postgres")).st_mtime))
    stamp = os.path.join(dest, ".server")
    if not os.path.exists(stamp) or open(stamp).read().strip() != want:
        shutil.rmtree(dest, ignore_errors=True)
        for d in (os.path.dirname(bindir), pkglibdir, sharedir):
            if os.path.isdir(dest + d):
                continue
            os.makedirs(os.path.dirname(dest + d), exist_ok=True)
            subprocess.check_call(["cp", "-a", d, dest + d])
        with open(stamp, "w") as f:
            f.write(want + "\n")
    # what an earlier install left (tidesam.so, test modules, control and SQL files)
    for d in (dest + pkglibdir, os.path.join(dest + sharedir, "extension")):
        for n in os.listdir(d):
            if n.startswith("tidesam"):
                os.unlink(os.path.join(d, n))
    subprocess.run(["make", "-s", "install", "DESTDIR=" + dest], cwd=src, check=True, stdout=out)
    subprocess.check_call(["chmod", "-R", "a+rX", dest])
    # every parent directory must be traversable by the server user
    if not user_can_reach(dest + bindir):
        raise RuntimeError("the server user %s cannot reach %s: pass --dest with a world-readable place"
                           % (RUN_USER, dest))
    return dest + bindir


def bindir(need_tidesam=False):
    """The PostgreSQL binaries the tests use: $TIDES_PG_BINDIR (scripts/test.sh
    installs once per run and sets it) or $PG_BINDIR, else with need_tidesam a private
    installation of this tree (built and installed now), else the system's."""
    b = os.environ.get("TIDES_PG_BINDIR") or os.environ.get("PG_BINDIR")
    if b:
        return b
    if need_tidesam:
        # once per process tree: later clusters and child processes reuse it
        os.environ["TIDES_PG_BINDIR"] = install()
        return os.environ["TIDES_PG_BINDIR"]
    return system_bindir()


def pg_regress(kind="regress", bin_dir=None):
    """pg_regress / pg_isolation_regress of the installation bin_dir belongs to
    (PGXS ships them under lib/pgxs/src/test)."""
    lib = os.path.join(os.path.dirname(bin_dir or bindir()), "lib", "pgxs", "src", "test")
    return os.path.join(lib, "regress", "pg_regress") if kind == "regress" else \
        os.path.join(lib, "isolation", "pg_isolation_regress")


# --------------------------------------------------------------------------
# processes


def _children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        # the comm field may contain spaces; ppid follows the last ')'
        kids.setdefault(int(st[st.rindex(")") + 2:].split()[1]), []).append(int(d))
    return kids


def process_tree(root_pid):
    """root_pid and all its descendants"""
    kids = _children_map()
    out, todo = [], [root_pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def pid_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        return st[st.rindex(")") + 2] != "Z"
    except OSError:
        return False


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


CRASH_LINES = re.compile(r"\bPANIC:|TRAP:|terminated by signal (?!9:)|was terminated by exception|"
                         r"stuck spinlock|could not access status of transaction")


def log_problems(text):
    """Lines of a server log that no test may show (a kill -9 of our own is
    'terminated by signal 9' and is allowed)."""
    return [line for line in text.splitlines() if CRASH_LINES.search(line)]


class PsqlError(Exception):
    pass


# --------------------------------------------------------------------------
# the cluster


def pick_port(lo=50000, hi=59999):
    """a port number for a socket in a private directory: it only names the
    socket (and the SysV key), so a clash is harmless; still, avoid the ones
    whose socket is in /tmp (someone's system server)."""
    for _ in range(100):
        p = random.randint(lo, hi)
        if not os.path.exists("/tmp/.s.PGSQL.%d" % p):
            return p
    return random.randint(lo, hi)


class Cluster:
    """A throwaway cluster in directory base: base/data, a socket in base/sock,
    the server log base/server.log (each may be placed elsewhere)."""

    STATE = "cluster.json"

    def __init__(self, base, port=None, data=None, sock=None, logfile=None, bin_dir=None):
        self.base = os.path.abspath(base)
        self.data = data or os.path.join(self.base, "data")
        self.sock = sock or os.path.join(self.base, "sock")
        self.logfile = logfile or os.path.join(self.base, "server.log")
        self.port = port or pick_port()
        self.bindir = bin_dir or bindir(need_tidesam=True)
        self.user = RUN_USER
        self.log_offset = 0

    # ---- state for the command line

    def save(self):
        with open(os.path.join(self.base, self.STATE), "w") as f:
            json.dump({k: getattr(self, k) for k in ("data", "sock", "logfile", "port", "bindir", "user")}, f)

    @classmethod
    def load(cls, base):
        with open(os.path.join(os.path.abspath(base), cls.STATE)) as f:
            s = json.load(f)
        c = cls(base, port=s["port"], data=s["data"], sock=s["sock"], logfile=s["logfile"], bin_dir=s["bindir"])
        return c

    def bin(self, name):
        return os.path.join(self.bindir, name)

    # ---- setup

    def make_dirs(self):
        """base (755), the socket directory and the log, owned by the server user"""
        ensure_user()
        os.makedirs(self.base, exist_ok=True)
        os.chmod(self.base, 0o755)
        for d in (self.sock, os.path.dirname(self.data)):
            os.makedirs(d, exist_ok=True)
            chown_tree(d)
        chown_tree(self.base)

    def initdb(self, conf=None, preload=True, regress_conf=False, opts=("--encoding=UTF8", "--locale=C"),
               per_run_conf=False):
        """initdb and the test settings.  conf: a dict (name: value) or a list
        of postgresql.conf lines, appended after the harness's own lines
        (socket, port, preload) and test/regress.conf (regress_conf).  With
        per_run_conf, postgresql.conf includes tides_test.conf, which
        set_conf() rewrites (read at the next start or reload)."""
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.kill9()
        if os.path.exists(self.data):
            shutil.rmtree(self.data)
        if os.path.exists(self.logfile):
            os.unlink(self.logfile)
        self.make_dirs()
        r = self.run([self.bin("initdb"), "-D", self.data, "-A", "trust", "--no-sync", "--no-instructions"]
                     + list(opts), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise RuntimeError("initdb failed:\n%s" % r.stdout)
        lines = ["", "# ---- test/harness/pgcluster.py",
                 "listen_addresses = ''",
                 "unix_socket_directories = '%s'" % self.sock,
                 "port = %d" % self.port]
        if preload:
            lines.append("shared_preload_libraries = 'tidesam'")
        if regress_conf:
            with open(os.path.join(ROOT, "test", "regress.conf")) as f:
                lines += ["# ---- test/regress.conf"] + [
                    l for l in f.read().splitlines()
                    if preload or not re.match(r"\s*(shared_preload_libraries|tides\.)", l)]
        if conf:
            lines.append("# ---- the test's own settings")
            lines += ["%s = %s" % kv for kv in conf.items()] if isinstance(conf, dict) else list(conf)
        if per_run_conf:
            lines.append("include_if_exists = 'tides_test.conf'")
        self.append_conf(lines)
        if per_run_conf:
            self.set_conf({})
        if os.path.isdir(self.base):
            self.save()
        return self

    def append_conf(self, lines):
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n".join(lines) + "\n")

    def set_conf(self, conf):
        """Replace the per-run settings file tides_test.conf (initdb(per_run_conf=True))."""
        path = os.path.join(self.data, "tides_test.conf")
        with open(path, "w") as f:
            for k, v in conf.items():
                f.write("%s = %s\n" % (k, v))
        chown_tree(path)

    # ---- running things

    def client_env(self, extra=None):
        """the environment of a client of this cluster"""
        e = dict(os.environ)
        for k in ("PGDATABASE", "PGOPTIONS", "PGSERVICE", "PGHOSTADDR", "PGPASSWORD", "PGUSER"):
            e.pop(k, None)
        e.update(PGHOST=self.sock, PGPORT=str(self.port), PGUSER=self.user)
        if extra:
            e.update(extra)
        return e

    def as_user(self, cmd):
        """cmd as the server user (a subclass may wrap it further)"""
        return as_user(cmd)

    def run(self, cmd, env=None, cwd=None, **kw):
        """cmd as the server user, in a directory that user can enter (the
        cluster directory, or /), with PGHOST/PGPORT/PGUSER of this cluster and
        HOME = the cluster directory."""
        return subprocess.run(self.as_user(cmd), env=self.client_env(dict(HOME=self.base, **(env or {}))),
                              cwd=cwd or self._cwd(), **kw)

    def _cwd(self):
        return self.base if os.path.isdir(self.base) else "/"

    def exec(self, cmd):
        """replace this process by cmd run as run() would (the command line's `run`)"""
        os.chdir(self._cwd())
        os.execvpe(as_user(cmd)[0], as_user(cmd), self.client_env({"HOME": self.base}))

    # ---- life cycle

    def postmaster_pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                return int(f.readline().strip())
        except (OSError, ValueError):
            return None

    def running(self):
        pm = self.postmaster_pid()
        return pm is not None and pid_alive(pm)

    def start(self, timeout=180, env=None, core=False, logfile=None):
        """pg_ctl start -w; returns the seconds it took.  env: extra environment
        of the postmaster (LD_PRELOAD...); core: pg_ctl -c (allow core files)."""
        logfile = logfile or self.logfile
        if not os.path.exists(logfile):
            open(logfile, "a").close()
            chown_tree(logfile)
        self.log_offset = os.path.getsize(logfile)
        t0 = time.time()
        cmd = [self.bin("pg_ctl"), "start", "-D", self.data, "-l", logfile, "-w", "-t", str(timeout)]
        if core:
            cmd.insert(2, "-c")
        r = self.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise RuntimeError("pg_ctl start failed: %s\n%s" % (r.stdout, self.new_log(logfile)[-3000:]))
        return time.time() - t0

    def stop(self, mode="fast", timeout=120):
        """pg_ctl stop -m mode; if that does not finish, immediate, then kill -9."""
        if self.postmaster_pid() is None:
            return True
        for m in (mode, "immediate") if mode != "immediate" else ("immediate",):
            r = self.run([self.bin("pg_ctl"), "stop", "-D", self.data, "-m", m, "-w", "-t", str(timeout)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode == 0:
                return m == mode
            if not self.running():
                return False
            log("pg_ctl stop -m %s of %s failed: %s" % (m, self.data, r.stdout.strip()))
        self.kill9()
        return False

    def restart(self, mode="fast", **kw):
        self.stop(mode)
        return self.start(**kw)

    def kill9(self):
        """SIGKILL the postmaster and every child at once (a simulated crash).
        Only a postmaster serving this data directory is killed."""
        pm = self.postmaster_pid()
        if pm is None or not pid_alive(pm) or self.data not in cmdline(pm):
            return False
        victims = process_tree(pm)
        for p in victims:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        # wait until the pids are gone, zombies included: PostgreSQL's lock
        # file check (kill(pid, 0)) still sees an unreaped postmaster
        deadline = time.time() + 30
        while time.time() < deadline and any(os.path.exists("/proc/%d" % p) for p in victims):
            time.sleep(0.01)
        return True

    def destroy(self, keep=False):
        """stop (immediate) and remove the cluster directory"""
        if self.running():
            self.stop("immediate", timeout=60)
        if not keep:
            shutil.rmtree(self.base, ignore_errors=True)

    # ---- logs and queries

    def new_log(self, logfile=None):
        """The server log written since the last start()."""
        try:
            with open(logfile or self.logfile, errors="replace") as f:
                f.seek(self.log_offset)
                return f.read()
        except OSError:
            return ""

    def conninfo(self, db="postgres"):
        return "host=%s port=%d dbname=%s user=%s" % (self.sock, self.port, db, self.user)

    def psql(self, sql, db="postgres", check=True, timeout=600, opts=(), env=None):
        """sql through psql -X -A -t -q (ON_ERROR_STOP), run by the calling
        user with the server user's name; returns stdout (check=False: the
        CompletedProcess)."""
        cmd = [self.bin("psql"), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.conninfo(db)] + list(opts)
        r = subprocess.run(cmd, input=sql, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, env=self.client_env(env))
        if not check:
            return r
        if r.returncode != 0:
            raise PsqlError(r.stderr.strip() or ("psql exit %d" % r.returncode))
        return r.stdout

    def rows(self, sql, db="postgres", **kw):
        return [line.split("|") for line in self.psql(sql, db=db, **kw).splitlines() if line != ""]

    def scalar(self, sql, db="postgres", **kw):
        out = self.psql(sql, db=db, **kw).strip()
        return out.splitlines()[-1] if out else ""


# --------------------------------------------------------------------------
# command line


def _cli(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="pgcluster.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("install")
    p.add_argument("--dest")
    p.add_argument("--src", default=ROOT)
    p.add_argument("--no-build", action="store_true")
    p = sub.add_parser("bindir")
    p.add_argument("--tidesam", action="store_true")
    p = sub.add_parser("init")
    p.add_argument("dir")
    p.add_argument("--port", type=int)
    p.add_argument("--no-preload", action="store_true")
    p.add_argument("--regress-conf", action="store_true")
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--conf", action="append", default=[])
    p.add_argument("--initdb-opts", default="--encoding=UTF8 --locale=C")
    p.add_argument("--log")
    p.add_argument("--bindir", help="default: TIDES_PG_BINDIR, PG_BINDIR, else a private installation"
                   " (the system's with --no-preload)")
    p = sub.add_parser("start")
    p.add_argument("dir")
    p.add_argument("--core", action="store_true")
    p.add_argument("--timeout", type=int, default=180)
    p.add_argument("--log", help="the server log of this start (default: the cluster's)")
    p = sub.add_parser("stop")
    p.add_argument("dir")
    p.add_argument("--mode", default="fast")
    p.add_argument("--timeout", type=int, default=120)
    p = sub.add_parser("kill9")
    p.add_argument("dir")
    p = sub.add_parser("destroy")
    p.add_argument("dirs", nargs="+")
    for name in ("run", "psql"):
        p = sub.add_parser(name)
        p.add_argument("dir")
        p.add_argument("args", nargs=argparse.REMAINDER)
    p = sub.add_parser("get")
    p.add_argument("dir")
    p.add_argument("key", choices=("sock", "port", "data", "log", "bindir", "user", "dir"))
    p = sub.add_parser("log-problems")
    p.add_argument("files", nargs="+")
    sub.add_parser("user")
    p = sub.add_parser("chown")
    p.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)

    if a.cmd == "install":
        print(install(a.dest, a.src, build=not a.no_build))
    elif a.cmd == "bindir":
        print(bindir(a.tidesam))
    elif a.cmd == "init":
        c = Cluster(a.dir, port=a.port, logfile=a.log and os.path.abspath(a.log),
                    bin_dir=a.bindir or bindir(need_tidesam=not a.no_preload))
        lines = list(a.set)
        for path in a.conf:
            with open(path) as f:
                lines += ["# from %s" % path] + f.read().splitlines()
        try:
            c.initdb(lines, preload=not a.no_preload, regress_conf=a.regress_conf, opts=a.initdb_opts.split())
        except RuntimeError as e:
            print(e, file=sys.stderr)
            return 1
    elif a.cmd == "start":
        try:
            Cluster.load(a.dir).start(timeout=a.timeout, core=a.core, logfile=a.log and os.path.abspath(a.log))
        except RuntimeError as e:
            print(e, file=sys.stderr)
            return 1
    elif a.cmd == "stop":
        return 0 if Cluster.load(a.dir).stop(a.mode, a.timeout) else 1
    elif a.cmd == "kill9":
        Cluster.load(a.dir).kill9()
    elif a.cmd == "destroy":
        for d in a.dirs:
            if os.path.exists(os.path.join(d, Cluster.STATE)):
                Cluster.load(d).destroy(keep=bool(os.environ.get("KEEP_CLUSTER")))
            elif not os.environ.get("KEEP_CLUSTER"):
                shutil.rmtree(d, ignore_errors=True)
    elif a.cmd == "run":
        Cluster.load(a.dir).exec(a.args)
    elif a.cmd == "psql":
        c = Cluster.load(a.dir)
        c.exec([c.bin("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1"] + a.args)
    elif a.cmd == "get":
        c = Cluster.load(a.dir)
        print({"sock": c.sock, "port": c.port, "data": c.data, "log": c.logfile, "bindir": c.bindir,
               "user": c.user, "dir": c.base}[a.key])
    elif a.cmd == "log-problems":
        bad = []
        for path in a.files:
            try:
                with open(path, errors="replace") as f:
                    bad += log_problems(f.read())
            except OSError:
                pass
        for line in bad:
            print(line)
        return 1 if bad else 0
    elif a.cmd == "user":
        print(ensure_user())
    elif a.cmd == "chown":
        for path in a.paths:
            chown_tree(path)
    return 0


if __name__ == "__main__":
    sys.exit(_cli(sys.argv[1:]))
