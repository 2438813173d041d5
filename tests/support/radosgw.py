#!/usr/bin/python3
"""A private, throwaway S3 server for tests: Ceph's radosgw on a one-node cluster.

    python3 tests/support/radosgw.py start DIR [--owner PID]   # prints one JSON line
    python3 tests/support/radosgw.py stop DIR    # stops the daemons it recorded in DIR

`start` makes a cluster in DIR (an empty temporary folder): a monitor, one OSD
keeping its objects in memory (memstore: no block device), and radosgw's beast
frontend on 127.0.0.1 and a free port, with cephx off and pools of size 1. It
creates a user with random keys and waits until a request signed with them
(SigV4) lists the user's buckets. Then it prints
{"endpoint", "access_key", "secret_key", "region", "pids", "dir", "seconds"}.
Everything lives under DIR (config, data, logs, admin sockets, pid list): never
/etc/ceph or /var/lib/ceph, so clusters in other folders do not collide (a new
fsid and new ports each time; the OSD takes free ports of 6800-7300).

`stop` sends SIGTERM to the PIDs recorded in DIR/pids.json, then SIGKILL after
a bounded wait: never anything found by name. A PID whose process start time
no longer matches the one recorded is someone else's and is left alone.

With --owner PID, a watcher process (recorded in pids.json too, its PID in the
JSON as "watcher") stops the cluster when that process ends without stopping it:
a test that crashed leaves no daemons behind.

Importable: start(dir, owner=None) -> dict and stop(dir) for pytest fixtures.
Every program it runs is logged to $STOWAGE_DEPS_LOG like test::run's commands,
for scripts/check-deps.
"""
import datetime
import functools
import hashlib
import hmac
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import string
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

START_TIMEOUT = 90  # seconds for the whole start; it takes 1-2 here
STOP_TIMEOUT = 10  # seconds between SIGTERM and SIGKILL, for each daemon
REGION = "us-east-1"  # what clients sign with; radosgw accepts any (tests/support/README.md)
RGW_NAME = "client.rgw.test"


class StartError(RuntimeError):
    pass


class PortTaken(StartError):
    """A port picked free was taken before the daemon bound it: worth another try."""


# ---- small helpers -----------------------------------------------------------------------------

def free_port():
    """A port nothing listens on right now (the kernel's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_command(args):
    """As test::run does: scripts/check-deps finds the package of every program run."""
    folder = os.environ.get("STOWAGE_DEPS_LOG")
    if folder:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"commands-{os.getpid()}.txt"), "a") as f:
            f.write(shlex.join(args) + "\n")


def not_installed(program):
    return f"{program} is not installed (scripts/install-deps installs Ceph's radosgw, ceph-mon, ceph-osd)"


def run(args, timeout):
    """Runs a Ceph tool to its end; its output, or StartError with it."""
    log_command(args)
    try:
        p = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise StartError(f"{args[0]} did not finish in {timeout:.0f} s")
    except FileNotFoundError:
        raise StartError(not_installed(args[0]))
    if p.returncode != 0:
        raise StartError(f"{shlex.join(args)} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p.stdout


def start_time_of(pid):
    """The process's start time in clock ticks (field 22 of /proc/PID/stat), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def alive(pid, started):
    """True while the recorded process runs (a zombie child of ours is reaped, not alive)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass  # not our child: the CLI started it
    if started is None or start_time_of(pid) != started:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def log_tails(d, lines=15):
    """The end of every daemon's log, for an error message."""
    out = []
    logs = os.path.join(d, "log")
    for name in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
        with open(os.path.join(logs, name), errors="replace") as f:
            tail = f.read().splitlines()[-lines:]
        out.append(f"--- {name} (last {len(tail)} lines)\n" + "\n".join(tail))
    return "\n".join(out)


# ---- the cluster's files -----------------------------------------------------------------------

def config(d, fsid, mon_v2, mon_v1, rgw_port):
    """ceph.conf: every path under d, cephx off, one OSD in memory, pools of size 1."""
    return f"""[global]
fsid = {fsid}
mon host = [v2:127.0.0.1:{mon_v2},v1:127.0.0.1:{mon_v1}]
run dir = {d}/run
crash dir = {d}/crash
log file = {d}/log/$name.log
mon cluster log file = {d}/log/cluster.log
keyring = {d}/keyring
auth cluster required = none
auth service required = none
auth client required = none
# one OSD: every replica on it, and no host level in the placement rule
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd crush chooseleaf type = 0
# radosgw makes its seven pools on the fly; few placement groups peer fast and
# stay under mon_max_pg_per_osd (250) on one OSD
osd pool default pg num = 1
osd pool default pgp num = 1
osd pool default pg autoscale mode = off
mon warn on pool no redundancy = false
# a bounded wait for the monitor, not the client's default of 300 s
client mount timeout = 30
rados mon op timeout = 30
ms bind ipv4 = true
ms bind ipv6 = false
# each pool radosgw makes is a new osdmap: propose it at once, not after the 1 s default
paxos propose interval = 0.01
paxos min wait = 0.01

[mon]
mon data = {d}/mon
# a port taken since it was picked: exit after one try (and start() picks
# others), not try it three times 5 s apart
ms bind retry count = 1
admin socket = {d}/run/$name.asok
# no refusal to start on a fuller disk than a real cluster would accept
mon data avail crit = 0
mon data avail warn = 0

[osd]
osd data = {d}/osd
osd objectstore = memstore
# the most the OSD keeps in memory (objects are only counted as written)
memstore device bytes = {1 << 30}
public addr = 127.0.0.1
cluster addr = 127.0.0.1
admin socket = {d}/run/$name.asok

[{RGW_NAME}]
# radosgw's own defaults ask for cephx and a secure monitor connection, which
# fail (EACCES) against a cluster without cephx
auth client required = none
ms mon client mode = crc
rgw data = {d}/rgw
# tcp_nodelay: without it beast writes an answer's head and its small body in two
# segments and Nagle holds the body until the client's delayed ACK, 40 ms later:
# a small GET or a listing took 44 ms instead of 2 (bench/s3/RESULTS.md)
rgw frontends = beast endpoint=127.0.0.1:{rgw_port} tcp_nodelay=1
# virtual-host style for BUCKET.localhost (curl resolves *.localhost to the
# loopback itself); any other Host, such as 127.0.0.1:PORT, is path style
rgw dns name = localhost
admin socket = {d}/run/$name.asok
# asio threads for a test server on 2 cores, not 512
rgw thread pool size = 16
rgw rados pool pg num min = 1
rgw dynamic resharding = false
"""


def record(d, name, proc):
    """Adds a started daemon to d/pids.json before anything can fail, so stop() finds it."""
    path = os.path.join(d, "pids.json")
    pids = json.load(open(path)) if os.path.exists(path) else []
    pids.append({"name": name, "pid": proc.pid, "started": start_time_of(proc.pid)})
    with open(path + ".tmp", "w") as f:
        json.dump(pids, f)
    os.replace(path + ".tmp", path)


def daemon(d, name, args):
    """Starts a daemon in the foreground of a session of its own: it outlives the CLI, and its
    output goes to a file (a C++ test reading the CLI's stdout must see it end)."""
    args = args + ["-f", "-c", os.path.join(d, "ceph.conf")]
    log_command(args)
    with open(os.path.join(d, "log", f"{name}.out"), "ab") as out:
        try:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=d)
        except FileNotFoundError:
            raise StartError(not_installed(args[0]))
    record(d, name, proc)
    return proc


# ---- S3: one signed request, without boto3 ------------------------------------------------------

def s3_request(info, method="GET", path="/", body=b"", payload_hash=None, headers=None, query=None,
               timeout=5):
    """One request signed with AWS Signature Version 4 (header auth, region REGION): (status,
    body). payload_hash: the x-amz-content-sha256 to send, by default the body's SHA-256 (the
    tests send UNSIGNED-PAYLOAD, which boto3 never does over http). path: URI-encoded, without
    the query; query: {name: value}; headers: more headers to sign and send (a Host too)."""
    host = info["endpoint"].split("://", 1)[1]
    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload_hash = payload_hash or hashlib.sha256(body).hexdigest()
    signed_headers = {"host": host, "x-amz-content-sha256": payload_hash, "x-amz-date": amz_date}
    signed_headers.update({k.lower(): v for k, v in (headers or {}).items()})
    names = sorted(signed_headers)
    quote = functools.partial(urllib.parse.quote, safe="-_.~")
    query_string = "&".join(f"{quote(k)}={quote(v)}" for k, v in sorted((query or {}).items()))
    header_lines = "".join(f"{n}:{signed_headers[n]}\n" for n in names)
    canonical = "\n".join([method, path, query_string, header_lines, ";".join(names), payload_hash])
    scope = f"{day}/{REGION}/s3/aws4_request"
    to_sign = f"AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    key = ("AWS4" + info["secret_key"]).encode()
    for part in (day, REGION, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    sent = dict(signed_headers)  # urllib sends this Host, not its own
    sent["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={info['access_key']}/{scope}, "
                             f"SignedHeaders={';'.join(names)}, Signature={signature}")
    url = info["endpoint"] + path + ("?" + query_string if query else "")
    request = urllib.request.Request(url, data=body or None, method=method, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def check_running(d, procs):
    """StartError (PortTaken if a log says so) when one of the daemons has exited."""
    for name, proc in procs.items():
        if proc.poll() is not None:
            error = PortTaken if "Address already in use" in log_tails(d, 5) else StartError
            raise error(f"{name} exited with status {proc.returncode}")


def listening_ports(pid):
    """The TCP ports the process listens on (its socket inodes in /proc/PID/net/tcp)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in fds]
        with open(f"/proc/{pid}/net/tcp") as f:
            rows = [line.split() for line in f.readlines()[1:]]
    except OSError:  # gone, or a descriptor closed while read
        return set()
    inodes = {link[8:-1] for link in links if link.startswith("socket:[")}
    return {int(r[1].rsplit(":", 1)[1], 16) for r in rows if r[3] == "0A" and r[9] in inodes}


def wait_for_mon(d, procs, ports, deadline):
    """Until the monitor itself listens on its ports (something else may hold them: then it
    exits, and check_running says PortTaken)."""
    while time.monotonic() < deadline:
        check_running(d, procs)
        if set(ports) <= listening_ports(procs["mon.a"].pid):
            return
        time.sleep(0.02)
    raise StartError(f"the monitor did not listen on {ports} in {START_TIMEOUT} s")


def wait_for_s3(d, info, procs, deadline):
    """Until the user's signed request is answered 200; StartError if a daemon dies or time is up."""
    status = None
    while time.monotonic() < deadline:
        check_running(d, procs)
        try:
            status = s3_request(info)[0]
            if status == 200:
                return
        except OSError as e:  # not listening yet
            status = str(e)
        time.sleep(0.1)
    raise StartError(f"radosgw at {info['endpoint']} did not answer a signed ListBuckets with 200 "
                     f"in {START_TIMEOUT} s (last answer: {status})")


# ---- start and stop -----------------------------------------------------------------------------

def random_keys():
    alnum = string.ascii_uppercase + string.digits
    access = "".join(secrets.choice(alnum) for _ in range(20))
    secret = "".join(secrets.choice(string.ascii_letters + string.digits + "+/") for _ in range(40))
    return access, secret


def make_cluster(d, deadline):
    """Config, monitor and OSD up; {name: Popen}."""
    for sub in ("run", "crash", "log", "mon", "osd", "rgw"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    conf = os.path.join(d, "ceph.conf")
    fsid, rgw_port = str(uuid.uuid4()), free_port()
    mon_v2, mon_v1 = free_port(), free_port()
    with open(conf, "w") as f:
        f.write(config(d, fsid, mon_v2, mon_v1, rgw_port))
    open(os.path.join(d, "keyring"), "w").close()
    monmap = os.path.join(d, "monmap")
    run(["monmaptool", "--create", "--fsid", fsid, "--addv", "a",
         f"[v2:127.0.0.1:{mon_v2},v1:127.0.0.1:{mon_v1}]", monmap, "-c", conf], 30)
    run(["ceph-mon", "--mkfs", "-i", "a", "--monmap", monmap, "-c", conf], 30)
    procs = {"mon.a": daemon(d, "mon.a", ["ceph-mon", "-i", "a"])}
    wait_for_mon(d, procs, (mon_v2, mon_v1), deadline)
    osd_uuid = str(uuid.uuid4())
    left = max(5, deadline - time.monotonic())
    osd_id = run(["ceph", "-c", conf, "--connect-timeout", str(int(left)), "osd", "new", osd_uuid],
                 left).strip()
    run(["ceph-osd", "--mkfs", "-i", osd_id, "--osd-uuid", osd_uuid, "-c", conf], 30)
    procs["osd." + osd_id] = daemon(d, "osd." + osd_id, ["ceph-osd", "-i", osd_id])
    return procs, rgw_port


def start_once(d, deadline):
    """One try at the cluster and radosgw: the dict the CLI prints, less dir and seconds."""
    procs, port = make_cluster(d, deadline)
    access, secret = random_keys()
    left = max(5, deadline - time.monotonic())
    # radosgw-admin makes the default realm, zone group and zone (and their pools) first, so
    # that radosgw finds them and does not race it making them
    run(["radosgw-admin", "-c", os.path.join(d, "ceph.conf"), "user", "create", "--uid", "test",
         "--display-name", "stowage tests", "--access-key", access, "--secret-key", secret], left)
    procs["rgw"] = daemon(d, "rgw", ["radosgw", "-n", RGW_NAME])
    info = {"endpoint": f"http://127.0.0.1:{port}", "access_key": access, "secret_key": secret,
            "region": REGION, "pids": [p.pid for p in procs.values()]}
    wait_for_s3(d, info, procs, deadline)
    return info


def start_watcher(d, owner):
    """A process that stops the cluster when the owner process has gone without stopping it
    (a test that crashed or was killed), and ends itself when the cluster is stopped."""
    started = start_time_of(owner)
    if started is None:
        raise StartError(f"the owner, pid {owner}, does not run")
    args = [sys.executable, os.path.abspath(__file__), "watch", d, str(owner), str(started)]
    log_command(args)
    with open(os.path.join(d, "log", "watcher.out"), "ab") as out:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out,
                                start_new_session=True)
    record(d, "watcher", proc)  # last: stop() ends it first
    return proc.pid


def watch(d, owner, owner_started, interval=0.5):
    while os.path.exists(os.path.join(d, "pids.json")):
        if start_time_of(owner) != owner_started:
            stop(d)
            return
        time.sleep(interval)


def start(d, tries=3, owner=None):
    """Starts the cluster and radosgw in the folder d; the dict the CLI prints. Another
    process may take a port between its pick and the daemon's bind: then a new try, anew.
    With owner (a PID), a watcher stops the cluster if that process ends first."""
    t0 = time.monotonic()
    deadline = t0 + START_TIMEOUT
    d = os.path.abspath(d)
    for attempt in range(1, tries + 1):
        try:
            info = start_once(d, deadline)
            break
        except BaseException as e:
            tails = log_tails(d)
            stop(d)
            if isinstance(e, PortTaken) and attempt < tries:
                for name in ("run", "crash", "log", "mon", "osd", "rgw"):
                    shutil.rmtree(os.path.join(d, name), ignore_errors=True)
                if os.path.exists(os.path.join(d, "monmap")):
                    os.remove(os.path.join(d, "monmap"))
                continue
            if isinstance(e, StartError):
                raise StartError(f"{e}\n{tails}") from None
            raise
    info.update(dir=d, seconds=round(time.monotonic() - t0, 2))
    if owner is not None:
        info["watcher"] = start_watcher(d, owner)
    with open(os.path.join(d, "radosgw.json"), "w") as f:
        json.dump(info, f)
    return info


def stop_one(p, timeout):
    """SIGTERM, then SIGKILL if it still runs after timeout; True if it needed SIGKILL."""
    if not alive(p["pid"], p["started"]):
        return False
    os.kill(p["pid"], signal.SIGTERM)
    end = time.monotonic() + timeout
    while time.monotonic() < end and alive(p["pid"], p["started"]):
        time.sleep(0.01)
    if not alive(p["pid"], p["started"]):
        return False
    os.kill(p["pid"], signal.SIGKILL)
    while alive(p["pid"], p["started"]):
        time.sleep(0.01)
    return True


def stop(d, timeout=STOP_TIMEOUT):
    """Stops the recorded daemons one by one, radosgw first and the monitor last (an OSD stopped
    with its monitor waits 5 s for an answer that never comes). The names that needed SIGKILL."""
    path = os.path.join(d, "pids.json")
    if not os.path.exists(path):
        return []
    # the watcher stops the cluster itself when its owner has gone: not itself then
    recorded = [p for p in reversed(json.load(open(path))) if p["pid"] != os.getpid()]
    killed = [p["name"] for p in recorded if stop_one(p, timeout)]
    os.remove(path)
    return killed


def main(argv):
    args = argv[1:]
    if args[:1] == ["watch"] and len(args) == 4:
        watch(args[1], int(args[2]), int(args[3]))
        return 0
    owner = None
    if len(args) == 4 and args[0] == "start" and args[2] == "--owner":
        owner, args = int(args[3]), args[:2]
    if len(args) != 2 or args[0] not in ("start", "stop"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if args[0] == "stop":
        killed = stop(args[1])
        if killed:
            print("radosgw.py: needed SIGKILL: " + ", ".join(killed), file=sys.stderr)
        return 0
    try:
        info = start(args[1], owner=owner)
    except StartError as e:
        print(f"radosgw.py: {e}", file=sys.stderr)
        return 1
    print(json.dumps(info), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
