"""pgharness.py -- a throw-away PostgreSQL cluster for the crash, wraparound,
fault and benchmark scripts in test/crash/.

Each cluster lives in its own directory, listens only on a Unix socket in
that directory (no TCP port, so it never collides with other servers on the
machine), and is run by an unprivileged OS user when the scripts run as root
(PostgreSQL refuses to run as root).  Nothing here touches a server it did
not start: kills go to the pids of this cluster's postmaster and its
children, by pid.
"""
import os
import pwd
import re
import shutil
import signal
import subprocess
import time

RUN_USER = os.environ.get("TIDES_TEST_USER", "tidestest")


def pg_config(what):
    pgc = os.environ.get("PG_CONFIG", "pg_config")
    return subprocess.check_output([pgc, what], text=True).strip()


BINDIR = os.environ.get("PG_BINDIR") or pg_config("--bindir")


def ensure_user():
    """Create the OS user that runs the servers (when running as root)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(RUN_USER)
    except KeyError:
        subprocess.check_call(["useradd", "--system", "--user-group", "--no-create-home",
                               "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
                               RUN_USER])
    return RUN_USER


def chown_tree(path):
    if os.geteuid() != 0:
        return
    pw = pwd.getpwnam(RUN_USER)
    if not os.path.isdir(path):
        os.chown(path, pw.pw_uid, pw.pw_gid)
        return
    for root, dirs, files in os.walk(path):
        os.chown(root, pw.pw_uid, pw.pw_gid)
        for f in files:
            os.chown(os.path.join(root, f), pw.pw_uid, pw.pw_gid)


def as_user(cmd):
    if os.geteuid() == 0:
        return ["runuser", "-u", RUN_USER, "--"] + cmd
    return cmd


def proc_children(pid):
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
            if ppid == pid:
                kids.append(int(d))
        except (OSError, ValueError):
            pass
    return kids


def pid_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        return st[st.rindex(")") + 2] != "Z"
    except OSError:
        return False


class PsqlError(Exception):
    pass


class Cluster:
    def __init__(self, base, port=5432):
        self.base = os.path.abspath(base)
        self.data = os.path.join(self.base, "data")
        self.sock = os.path.join(self.base, "sock")
        self.logfile = os.path.join(self.base, "server.log")
        self.port = port
        self.log_offset = 0

    # ---- setup

    def initdb(self, conf):
        ensure_user()
        if os.path.exists(self.base):
            self.kill9()
            shutil.rmtree(self.base)
        os.makedirs(self.sock)
        chown_tree(self.base)
        os.chmod(self.base, 0o755)
        subprocess.check_call(as_user([os.path.join(BINDIR, "initdb"), "-D", self.data, "-A", "trust",
                                       "--no-sync", "-E", "UTF8", "--locale=C", "--no-instructions"]),
                              stdout=subprocess.DEVNULL)
        base = {
            "listen_addresses": "''",
            "unix_socket_directories": "'%s'" % self.sock,
            "port": str(self.port),
            "shared_preload_libraries": "'tidesam'",
            "max_connections": "40",
            "shared_buffers": "32MB",
            "log_line_prefix": "'%m [%p] '",
            "include_if_exists": "'tides_test.conf'",
        }
        base.update(conf)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            for k, v in base.items():
                f.write("%s = %s\n" % (k, v))
        self.set_conf({})

    def set_conf(self, conf):
        """Replace the per-run settings file (read at the next start/reload)."""
        path = os.path.join(self.data, "tides_test.conf")
        with open(path, "w") as f:
            for k, v in conf.items():
                f.write("%s = %s\n" % (k, v))
        chown_tree(path)

    # ---- life cycle

    def postmaster_pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                return int(f.readline().strip())
        except (OSError, ValueError):
            return None

    def start(self, timeout=180, env=None):
        """Start and wait until connections are accepted; returns seconds taken."""
        if os.path.exists(self.logfile):
            self.log_offset = os.path.getsize(self.logfile)
        else:
            self.log_offset = 0
        t0 = time.time()
        cmd = as_user([os.path.join(BINDIR, "pg_ctl"), "start", "-D", self.data, "-l", self.logfile,
                       "-w", "-t", str(timeout)])
        e = dict(os.environ)
        if env:
            e.update(env)
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e)
        if r.returncode != 0:
            raise RuntimeError("pg_ctl start failed: %s\n%s" % (r.stdout, self.new_log()[-3000:]))
        return time.time() - t0

    def stop(self, mode="fast", timeout=120):
        if self.postmaster_pid() is None:
            return
        r = subprocess.run(as_user([os.path.join(BINDIR, "pg_ctl"), "stop", "-D", self.data, "-m", mode,
                                    "-w", "-t", str(timeout)]),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            self.kill9()

    def kill9(self):
        """SIGKILL the postmaster and every child at once (a simulated crash)."""
        pm = self.postmaster_pid()
        if pm is None or not pid_alive(pm):
            return False
        victims = [pm] + proc_children(pm)
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

    def running(self):
        pm = self.postmaster_pid()
        return pm is not None and pid_alive(pm)

    # ---- logs and queries

    def new_log(self):
        """The server log written since the last start()."""
        try:
            with open(self.logfile, errors="replace") as f:
                f.seek(self.log_offset)
                return f.read()
        except OSError:
            return ""

    def conninfo(self, db="postgres"):
        return "host=%s port=%d dbname=%s user=%s" % (self.sock, self.port, db,
                                                      RUN_USER if os.geteuid() == 0 else pwd.getpwuid(os.getuid()).pw_name)

    def psql(self, sql, db="postgres", check=True, timeout=600, opts=()):
        cmd = [os.path.join(BINDIR, "psql"), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1",
               "-d", self.conninfo(db)] + list(opts)
        r = subprocess.run(cmd, input=sql, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
        if check and r.returncode != 0:
            raise PsqlError(r.stderr.strip() or ("psql exit %d" % r.returncode))
        if not check:
            return r
        return r.stdout

    def rows(self, sql, db="postgres", **kw):
        out = self.psql(sql, db=db, **kw)
        return [line.split("|") for line in out.splitlines() if line != ""]

    def scalar(self, sql, db="postgres", **kw):
        out = self.psql(sql, db=db, **kw).strip()
        return out.splitlines()[-1] if out else ""


def log_problems(text):
    """Lines of a server log that no crash test may show."""
    bad = []
    for line in text.splitlines():
        if re.search(r"\bPANIC:|TRAP:|terminated by signal (?!9:)|was terminated by exception|"
                     r"stuck spinlock|could not access status of transaction", line):
            bad.append(line)
    return bad
