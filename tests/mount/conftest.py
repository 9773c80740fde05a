"""The pytest mount fixture (a trial; see tests/README.md).

    pytest-3 tests/mount/t_views.py --daemon build/pisessionfs

`mounted(store)` starts the real daemon in the foreground (-f -o
auto_unmount), stderr to a log, and waits (bounded by MOUNT_WAIT) until
the mountpoint is in /proc/self/mountinfo.  Its finalizer always runs:
the daemon must still be alive, `fusermount3 -u` must work, the daemon
must then exit 0 within 5 s, nothing may stay mounted, and the daemon's
stderr must have no line saying error, warning, sanitizer or runtime
error; any of these fails the test (as a teardown error).

`fs` runs every access to the mount in a thread of its own and waits at
most TIMEOUT seconds for it: a hung daemon fails the test with the call
that hung, instead of hanging it (the finalizer then kills the daemon,
which releases the stuck thread).  TIME_SCALE stretches every limit as in
lib.sh.  On success the session ends with "checks: N" (N passed tests),
the line tests/run-suite.sh needs; a skipped or failed test withholds it.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

SCALE = float(os.environ.get("TIME_SCALE", "1"))
TIMEOUT = float(os.environ.get("TIMEOUT") or 10 * SCALE)
MOUNT_WAIT = float(os.environ.get("MOUNT_WAIT") or 10 * SCALE)
TROUBLE = re.compile(r"error|warning|sanitizer|runtime error", re.I)


def pytest_addoption(parser):
    parser.addoption("--daemon", default=os.environ.get("PSFS_DAEMON"),
                     help="path of pisessionfs (default $PSFS_DAEMON)")


def _unescape(field):  # mountinfo escapes space, tab, newline, backslash
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mountpoints():
    with open("/proc/self/mountinfo") as f:
        return [_unescape(line.split()[4]) for line in f]


def is_mounted(mp):
    return os.path.abspath(mp) in mountpoints()


class FS:
    """Bounded access to the mount: fs(fn, *args) or the helpers below."""

    def __call__(self, fn, *args, timeout=None):
        limit = TIMEOUT if timeout is None else timeout
        box = {}

        def run():
            try:
                box["value"] = fn(*args)
            except BaseException as e:  # handed to the caller
                box["error"] = e

        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(limit)
        if t.is_alive():
            pytest.fail("timed out after %gs (daemon hung?): %s%r"
                        % (limit, getattr(fn, "__name__", fn), args), pytrace=False)
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def ls(self, path):
        """The names in path, sorted as `LC_ALL=C ls` does."""
        return sorted(self(os.listdir, path), key=os.fsencode)

    def readlink(self, path):
        return self(os.readlink, path)

    def read_text(self, path):
        def read():
            with open(path, encoding="utf-8") as f:
                return f.read()
        return self(read)

    def islink(self, path):
        return self(os.path.islink, path)

    def missing(self, path):
        """True when lstat(path) fails with ENOENT."""
        try:
            self(os.lstat, path)
        except FileNotFoundError:
            return True
        return False

    def poll(self, cond, seconds):
        """Retries cond() (bounded, every 50 ms) for seconds * TIME_SCALE."""
        end = time.monotonic() + seconds * SCALE
        while True:
            try:
                if self(cond):
                    return True
            except OSError:
                pass
            if time.monotonic() >= end:
                return False
            time.sleep(0.05)


class Mount:
    def __init__(self, daemon, store, mnt, log, args):
        self.path, self.log = mnt, log
        with open(log, "wb") as err:
            self.proc = subprocess.Popen(
                [daemon, "--store", store, "-f", "-o", "auto_unmount", *args, mnt],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        end = time.monotonic() + MOUNT_WAIT
        while not is_mounted(mnt):
            if self.proc.poll() is not None:
                pytest.fail("daemon exited (%d) before mounting %s: %s"
                            % (self.proc.returncode, mnt, self.log_text()[:2000]), pytrace=False)
            if time.monotonic() >= end:
                self.proc.kill()
                self.proc.wait()
                pytest.fail("%s not mounted after %gs: %s" % (mnt, MOUNT_WAIT, self.log_text()[:2000]),
                            pytrace=False)
            time.sleep(0.05)

    def log_text(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def unmount(self):
        """Unmounts; returns what went wrong (empty when nothing did)."""
        problems = []
        if self.proc.poll() is not None:
            problems.append("the daemon died while mounted (exit status %d): %s"
                            % (self.proc.returncode, self.log_text()[-2000:]))
        else:
            self.proc.send_signal(signal.SIGCONT)  # a test may have stopped it
        if is_mounted(self.path):
            r = subprocess.run(["fusermount3", "-u", self.path], capture_output=True, text=True,
                               timeout=TIMEOUT)
            if r.returncode != 0:
                problems.append("fusermount3 -u %s failed: %s" % (self.path, r.stderr.strip()))
                self.proc.kill()
                subprocess.run(["fusermount3", "-uz", self.path], capture_output=True, timeout=TIMEOUT)
        if self.proc.returncode is None:
            try:
                rc = self.proc.wait(5 * SCALE)
                if rc != 0:
                    problems.append("the daemon exited with status %d after the unmount" % rc)
            except subprocess.TimeoutExpired:
                problems.append("the daemon did not exit within %gs of the unmount" % (5 * SCALE))
                self.proc.kill()
                self.proc.wait()
        if is_mounted(self.path):
            problems.append("%s is still mounted after the unmount" % self.path)
            subprocess.run(["fusermount3", "-uz", self.path], capture_output=True, timeout=TIMEOUT)
        bad = [line for line in self.log_text().splitlines() if TROUBLE.search(line)]
        if bad:
            problems.append("daemon stderr has: " + "\n".join(bad[:20]))
        return problems


@pytest.fixture(scope="session")
def daemon(request):
    path = request.config.getoption("--daemon")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("no daemon: pass --daemon PATH or set PSFS_DAEMON (got %r)" % path, pytrace=False)
    if not os.path.exists("/dev/fuse"):
        pytest.skip("/dev/fuse is missing, nothing can be mounted")
    return os.path.abspath(path)


@pytest.fixture(scope="session")
def fs():
    return FS()


@pytest.fixture(scope="module")
def scratch():
    """A scratch directory with store/ and mnt/, removed at the end."""
    d = tempfile.mkdtemp(prefix="psfs-pytest.")
    os.makedirs(os.path.join(d, "store"))
    os.makedirs(os.path.join(d, "mnt"))
    yield d
    if os.environ.get("KEEP"):
        print("KEEP is set: kept", d)
    elif not [m for m in mountpoints() if m.startswith(d + "/")]:
        shutil.rmtree(d)


@pytest.fixture(scope="module")
def mounted(daemon, scratch, request):
    """mounted(store, mnt=None, *args): the daemon on store, at mnt
    (default scratch/mnt); unmounted and judged at the end of the module."""
    mounts = []

    def mount(store, mnt=None, *args):
        mnt = mnt or os.path.join(scratch, "mnt")
        log = os.path.join(scratch, "daemon.%d.log" % (len(mounts) + 1))
        m = Mount(daemon, store, mnt, log, args)
        mounts.append(m)
        return m

    yield mount
    problems = []
    for m in reversed(mounts):  # last mounted first
        problems += m.unmount()
    if problems:
        pytest.fail("\n".join(p.replace(scratch, "$T") for p in problems), pytrace=False)


_outcomes = {"passed": 0, "failed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        _outcomes["passed"] += 1
    elif report.failed:
        _outcomes["failed"] += 1
    elif report.skipped:
        _outcomes["skipped"] += 1


def pytest_terminal_summary(terminalreporter, exitstatus):
    o = _outcomes
    if exitstatus == 0 and o["failed"] == 0 and o["skipped"] == 0 and o["passed"] > 0:
        terminalreporter.write_line("checks: %d" % o["passed"])
