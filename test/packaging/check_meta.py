#!/usr/bin/env python3
"""check_meta.py -- META.json against the PGXN Meta Spec v1.0.0 and the tree.

    python3 test/packaging/check_meta.py [REPO]

Checks (one line each, "ok: ..." or "FAILED: ..."; exit status 1 on any
failure):

  spec      META.json is JSON and follows PGXN Meta Spec 1.0.0
            (https://pgxn.org/spec/): required keys, no unknown keys except
            x_*, semantic versions, license names, prereq phases,
            relationships and version ranges, resources, release_status,
            no_index, tags.
  version   META.json's version is tidesam.control's default_version
            ("1.1" and "1.1.0" are the same version: PGXN wants three
            parts, PostgreSQL's script names use two), and so is the version
            of every extension in provides.
  files     every file that provides and no_index name exists.
  chain     the extension's scripts: every tidesam--A--B.sql and
            tidesam--V.sql is in the Makefile's DATA (by its wildcard), the
            default version is installable, and ALTER EXTENSION tidesam
            UPDATE reaches the default version from every version a script
            names (sql/ext_versions.sql checks the catalogs it produces).
  debian    debian/changelog's newest version is META.json's version.

The output names no versions, so test/ext/expected/packaging.out does not
change when the version does.
"""
import glob
import json
import os
import re
import sys

SEMVER = (r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
          r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
          r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?")
VERSION_RE = re.compile("^" + SEMVER + "$")
RANGE_ONE = r"(?:(?:[=!]=|[<>]=?)\s*)?" + SEMVER
VERSION_RANGE_RE = re.compile(r"^(?:0|" + RANGE_ONE + r"(?:,\s*" + RANGE_ONE + r")*)$")
TERM_RE = re.compile(r"^[^/\\\s\x00-\x1f\x7f]{2,}$")
TAG_RE = re.compile(r"^[^/\\\x00-\x1f\x7f]{2,255}$")
LICENSES = {
    "agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd",
    "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit",
    "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay",
    "sun", "zlib", "open_source", "restricted", "unrestricted", "unknown",
}
TOP_REQUIRED = ["name", "version", "abstract", "maintainer", "license", "provides", "meta-spec"]
TOP_OPTIONAL = ["description", "generated_by", "tags", "no_index", "prereqs", "release_status", "resources"]
PHASES = ["configure", "build", "test", "runtime", "develop"]
RELATIONSHIPS = ["requires", "recommends", "suggests", "conflicts"]

failures = 0


def report(what, problems):
    global failures
    if problems:
        failures += 1
        for p in problems:
            print(f"FAILED: {what}: {p}")
    else:
        print(f"ok: {what}")


def custom(key):
    return re.match(r"^[xX]_.", key) is not None


def unknown_keys(obj, allowed, where):
    return [f"{where}: unknown key {k!r}" for k in obj if k not in allowed and not custom(k)]


def is_uri(v):
    return isinstance(v, str) and re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$", v) is not None


def check_spec(m):
    p = []
    if not isinstance(m, dict):
        return ["the top level is not an object"]
    p += [f"missing required key {k!r}" for k in TOP_REQUIRED if k not in m]
    p += unknown_keys(m, TOP_REQUIRED + TOP_OPTIONAL, "top level")
    if "name" in m and not (isinstance(m["name"], str) and TERM_RE.match(m["name"])):
        p.append("name is not a term (2+ characters, no slash, backslash, space or control)")
    if "version" in m and not (isinstance(m["version"], str) and VERSION_RE.match(m["version"])):
        p.append(f"version {m['version']!r} is not a semantic version")
    for k in ("abstract", "description", "generated_by"):
        if k in m and not (isinstance(m[k], str) and m[k]):
            p.append(f"{k} is not a non-empty string")
    mt = m.get("maintainer")
    if mt is not None and not ((isinstance(mt, str) and mt) or
                               (isinstance(mt, list) and mt and all(isinstance(x, str) and x for x in mt))):
        p.append("maintainer is neither a non-empty string nor a list of them")
    lic = m.get("license")
    if lic is not None:
        if isinstance(lic, str):
            ok = lic in LICENSES
        elif isinstance(lic, list):
            ok = bool(lic) and len(set(lic)) == len(lic) and all(x in LICENSES for x in lic)
        elif isinstance(lic, dict):
            ok = bool(lic) and all(is_uri(v) for v in lic.values())
        else:
            ok = False
        if not ok:
            p.append(f"license {lic!r} is not a known license name, a list of them, or names mapped to URIs")
    ms = m.get("meta-spec")
    if ms is not None:
        if not isinstance(ms, dict) or not re.match(r"^1\.0\.\d+$", str(ms.get("version", ""))):
            p.append("meta-spec.version is not 1.0.x")
        else:
            p += unknown_keys(ms, ["version", "url"], "meta-spec")
            if "url" in ms and ms["url"] != "https://pgxn.org/meta/spec.txt":
                p.append("meta-spec.url is not https://pgxn.org/meta/spec.txt")
    prov = m.get("provides")
    if prov is not None:
        if not isinstance(prov, dict) or not prov:
            p.append("provides is not a non-empty object")
        else:
            for name, ext in prov.items():
                if not TERM_RE.match(name):
                    p.append(f"provides: {name!r} is not a term")
                if not isinstance(ext, dict):
                    p.append(f"provides.{name} is not an object")
                    continue
                p += [f"provides.{name}: missing {k!r}" for k in ("file", "version") if k not in ext]
                p += unknown_keys(ext, ["file", "version", "abstract", "docfile"], f"provides.{name}")
                if "version" in ext and not VERSION_RE.match(str(ext["version"])):
                    p.append(f"provides.{name}.version is not a semantic version")
    pr = m.get("prereqs")
    if pr is not None:
        if not isinstance(pr, dict) or not any(k in pr for k in PHASES):
            p.append("prereqs names no phase")
        else:
            p += unknown_keys(pr, PHASES, "prereqs")
            for ph in PHASES:
                if ph not in pr:
                    continue
                phase = pr[ph]
                if not isinstance(phase, dict) or not any(k in phase for k in RELATIONSHIPS):
                    p.append(f"prereqs.{ph} names no relationship")
                    continue
                p += unknown_keys(phase, RELATIONSHIPS, f"prereqs.{ph}")
                for rel in RELATIONSHIPS:
                    if rel not in phase:
                        continue
                    r = phase[rel]
                    if not isinstance(r, dict) or not r:
                        p.append(f"prereqs.{ph}.{rel} is not a non-empty object")
                        continue
                    for dep, rng in r.items():
                        if not TERM_RE.match(dep):
                            p.append(f"prereqs.{ph}.{rel}: {dep!r} is not a term")
                        if not (rng == 0 or (isinstance(rng, str) and VERSION_RANGE_RE.match(rng))):
                            p.append(f"prereqs.{ph}.{rel}.{dep}: {rng!r} is not a version range")
    if "release_status" in m and m["release_status"] not in ("stable", "testing", "unstable"):
        p.append("release_status is not stable, testing or unstable")
    res = m.get("resources")
    if res is not None:
        if not isinstance(res, dict) or not any(k in res for k in ("homepage", "bugtracker", "repository")):
            p.append("resources names neither homepage, bugtracker nor repository")
        else:
            p += unknown_keys(res, ["homepage", "bugtracker", "repository"], "resources")
            if "homepage" in res and not is_uri(res["homepage"]):
                p.append("resources.homepage is not a URI")
            bt = res.get("bugtracker")
            if bt is not None:
                if not isinstance(bt, dict) or not ("web" in bt or "mailto" in bt):
                    p.append("resources.bugtracker has neither web nor mailto")
                else:
                    p += unknown_keys(bt, ["web", "mailto"], "resources.bugtracker")
                    if "web" in bt and not is_uri(bt["web"]):
                        p.append("resources.bugtracker.web is not a URI")
                    if "mailto" in bt and not re.match(r"^[^@\s]+@[^@\s]+\.[^@\s]+$", str(bt["mailto"])):
                        p.append("resources.bugtracker.mailto is not an email address")
            rp = res.get("repository")
            if rp is not None:
                if not isinstance(rp, dict) or not (("url" in rp and "type" in rp) or "web" in rp):
                    p.append("resources.repository has neither url and type nor web")
                else:
                    p += unknown_keys(rp, ["url", "web", "type"], "resources.repository")
                    if "type" in rp and not re.match(r"^[a-z]+$", str(rp["type"])):
                        p.append("resources.repository.type is not a lowercase word")
    ni = m.get("no_index")
    if ni is not None:
        if not isinstance(ni, dict) or not ("file" in ni or "directory" in ni):
            p.append("no_index has neither file nor directory")
        else:
            p += unknown_keys(ni, ["file", "directory"], "no_index")
            for k in ("file", "directory"):
                v = ni.get(k, [])
                if isinstance(v, str):
                    v = [v]
                if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
                    p.append(f"no_index.{k} is not a path or a list of paths")
    tags = m.get("tags")
    if tags is not None:
        if not isinstance(tags, list) or not tags or not all(isinstance(t, str) and TAG_RE.match(t) for t in tags):
            p.append("tags is not a non-empty list of tags")
    return p


def three_part(v):
    """'1.1' -> '1.1.0' (a two-part extension version as PGXN counts it)."""
    return v + ".0" if re.match(r"^\d+\.\d+$", v) else v


def control_default_version(repo):
    with open(os.path.join(repo, "tidesam.control")) as f:
        for line in f:
            mm = re.match(r"^\s*default_version\s*=\s*'([^']*)'", line)
            if mm:
                return mm.group(1)
    return None


def main():
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    try:
        with open(os.path.join(repo, "META.json"), encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        report("META.json is JSON", [str(e)])
        return 1
    report("META.json follows the PGXN Meta Spec 1.0.0", check_spec(meta))

    dv = control_default_version(repo)
    p = []
    if dv is None:
        p.append("tidesam.control has no default_version")
    else:
        if meta.get("version") != three_part(dv):
            p.append(f"META.json version {meta.get('version')!r} is not tidesam.control's "
                     f"default_version {dv!r}")
        for name, ext in (meta.get("provides") or {}).items():
            if isinstance(ext, dict) and ext.get("version") != three_part(dv):
                p.append(f"provides.{name}.version {ext.get('version')!r} is not default_version {dv!r}")
        if "tidesam" not in (meta.get("provides") or {}):
            p.append("provides does not name the extension tidesam")
    report("META.json version is tidesam.control's default_version", p)

    p = []
    for name, ext in (meta.get("provides") or {}).items():
        for k in ("file", "docfile"):
            if isinstance(ext, dict) and k in ext and not os.path.isfile(os.path.join(repo, ext[k])):
                p.append(f"provides.{name}.{k} {ext[k]!r} does not exist")
    ni = meta.get("no_index") or {}
    for k, test in (("file", os.path.isfile), ("directory", os.path.isdir)):
        v = ni.get(k, [])
        for x in ([v] if isinstance(v, str) else v):
            if not test(os.path.join(repo, x)):
                p.append(f"no_index.{k} {x!r} does not exist")
    report("the files META.json names exist", p)

    # the scripts and the update graph
    p = []
    base, edges = set(), {}
    for path in sorted(glob.glob(os.path.join(repo, "tidesam--*.sql"))):
        parts = os.path.basename(path)[len("tidesam--"):-len(".sql")].split("--")
        if len(parts) == 1:
            base.add(parts[0])
        elif len(parts) == 2:
            edges.setdefault(parts[0], set()).add(parts[1])
        else:
            p.append(f"{os.path.basename(path)} is neither tidesam--V.sql nor tidesam--A--B.sql")
    with open(os.path.join(repo, "Makefile")) as f:
        makefile = f.read()
    if not re.search(r"^DATA\s*=.*\$\(wildcard tidesam--\*\.sql\)", makefile, re.M):
        p.append("the Makefile's DATA does not install every tidesam--*.sql")
    versions = base | set(edges) | {b for bs in edges.values() for b in bs}

    def reachable(v):
        seen, todo = {v}, [v]
        while todo:
            for n in edges.get(todo.pop(), ()):
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return seen
    if dv is not None:
        if not base:
            p.append("no base script tidesam--V.sql")
        if not any(dv in reachable(b) for b in base):
            p.append(f"default_version {dv} is installed by no base script or update chain")
        for v in sorted(versions):
            if dv not in reachable(v):
                p.append(f"ALTER EXTENSION tidesam UPDATE does not reach {dv} from {v}")
    report("the update chain reaches the default version from every version", p)

    p = []
    try:
        with open(os.path.join(repo, "debian", "changelog")) as f:
            first = f.readline()
        mm = re.match(r"^(\S+) \(([^)]+)\)", first)
        if not mm:
            p.append("debian/changelog's first line names no version")
        else:
            if mm.group(1) != "tidesam":
                p.append(f"debian/changelog names source {mm.group(1)!r}, not tidesam")
            upstream = re.sub(r"-[^-]*$", "", mm.group(2).split(":")[-1])
            if upstream != meta.get("version"):
                p.append(f"debian/changelog's version {mm.group(2)!r} is not META.json's {meta.get('version')!r}")
    except OSError as e:
        p.append(str(e))
    report("debian/changelog's version is META.json's", p)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
