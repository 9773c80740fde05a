"""The navigation views at the mount root: by-id/ (with unique prefixes),
by-name/ (odd names, collisions), by-cwd/ (from the headers' cwd, so
dashes in paths are not ambiguous), recent/ (newest first, 50 at most).

The pytest port of t_views.sh (a trial; see tests/README.md)."""
import json
import os

import pytest

P = "--home-u-my-proj--"
A1 = "2026-01-01T00-00-00-000Z_aaaa1111"


def mk_session(store, proj, stem, sid, cwd, name, mtime):
    d = os.path.join(store, proj)
    os.makedirs(d, exist_ok=True)
    f = os.path.join(d, stem + ".jsonl")
    lines = [
        {"type": "session", "version": 3, "id": sid, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "hello", "timestamp": 1767225601000}},
    ]
    if name:
        lines.append({"type": "session_info", "id": "n1", "parentId": "u1",
                      "timestamp": "2026-01-01T00:00:02.000Z", "name": name})
    with open(f, "w", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    os.utime(f, (mtime, mtime))


@pytest.fixture(scope="module")
def mnt(scratch, mounted):
    store = os.path.join(scratch, "store")
    mk_session(store, P, A1, "aaaa1111-0000-0000-0000-000000000001", "/home/u/my-proj", "Refactor auth", 1000)
    mk_session(store, P, "2026-01-02T00-00-00-000Z_aaaa2222", "aaaa2222-0000-0000-0000-000000000002",
               "/home/u/my-proj", "Refactor auth", 2000)
    mk_session(store, "--home-u-my--proj--", "2026-01-03T00-00-00-000Z_bbbb3333",
               "bbbb3333-0000-0000-0000-000000000003", "/home/u/my/-proj", "a/b: ünïcode ✓", 3000)
    mk_session(store, "--srv-x--", "2026-01-04T00-00-00-000Z_cccc4444", "cccc4444-0000-0000-0000-000000000004",
               "/srv/x", "", 4000)
    return mounted(store).path


def test_root_lists_the_views(fs, mnt):
    assert [n for n in fs.ls(mnt) if n.startswith(("by-", "recent"))] == ["by-cwd", "by-id", "by-name", "recent"]


def test_by_id(fs, mnt):
    assert len(fs.ls(f"{mnt}/by-id")) == 4
    assert fs.readlink(f"{mnt}/by-id/aaaa1111-0000-0000-0000-000000000001") == f"../{P}/{A1}"
    # a unique prefix resolves, an ambiguous one does not
    assert fs.readlink(f"{mnt}/by-id/cccc") == "../--srv-x--/2026-01-04T00-00-00-000Z_cccc4444"
    assert fs.missing(f"{mnt}/by-id/aaaa")
    # cd through a prefix lands in the session
    assert "0001-user.u1.md" in fs.ls(f"{mnt}/by-id/bbbb3/")


def test_by_name(fs, mnt):
    names = fs.ls(f"{mnt}/by-name")
    assert "Refactor auth" in names
    assert "Refactor auth~aaaa2222" in names  # the later one with the same name gets its id
    assert "a%2Fb: ünïcode ✓" in names  # slash escaped, Unicode kept
    assert len(names) == 3  # unnamed sessions are not in by-name
    assert fs.readlink(f"{mnt}/by-name/Refactor auth") == f"../{P}/{A1}"


def test_by_cwd(fs, mnt):
    assert fs.ls(f"{mnt}/by-cwd/home/u/my-proj") == [A1, "2026-01-02T00-00-00-000Z_aaaa2222"]
    # a dash in a path is not a slash
    assert fs.ls(f"{mnt}/by-cwd/home/u/my/-proj") == ["2026-01-03T00-00-00-000Z_bbbb3333"]
    # the link resolves
    assert fs.read_text(f"{mnt}/by-cwd/home/u/my-proj/{A1}/0001-user.u1.md").splitlines()[-1] == "hello"
    assert fs.missing(f"{mnt}/by-cwd/home/u/nope")


def test_recent_is_newest_first(fs, mnt):
    assert fs.ls(f"{mnt}/recent")[:2] == ["01-2026-01-04T00-00-00-000Z_cccc4444",
                                          "02-2026-01-03T00-00-00-000Z_bbbb3333"]


def test_views_follow_the_store(fs, mnt, scratch):
    store = os.path.join(scratch, "store")
    mk_session(store, "--srv-x--", "2026-01-05T00-00-00-000Z_dddd5555", "dddd5555-0000-0000-0000-000000000005",
               "/srv/x", "Fresh", 5000)
    assert fs.poll(lambda: os.path.islink(f"{mnt}/by-name/Fresh"), 3), "a new session shows in by-name"
    assert fs.poll(lambda: os.path.islink(f"{mnt}/recent/01-2026-01-05T00-00-00-000Z_dddd5555"), 3), \
        "and first in recent"


def test_recent_stops_at_50(fs, mnt, scratch):
    store = os.path.join(scratch, "store")
    for i in range(10, 71):
        mk_session(store, "--many--", f"2026-02-01T00-00-00-000Z_e{i}", f"eeee00{i}-0000-0000-0000-000000000000",
                   "/m", "", 6000 + i)
    assert fs.poll(lambda: len(os.listdir(f"{mnt}/recent")) == 50, 3), "recent stops at 50"
