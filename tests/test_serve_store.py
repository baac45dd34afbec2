"""The server's SQLite store: write blocks committed in groups, each returning only once its
group is on disk, a failed block taking back only itself, a duplicate refused as such."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from quizgym.serve.db import DuplicateError, ServeStoreError, SqliteDatabase
from quizgym.serve.storage import open_database


def test_concurrent_blocks_are_each_committed_before_they_return(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "s.sqlite3")
    seen: list[bool] = []
    lock = threading.Lock()

    def write(k: int) -> None:
        for j in range(20):
            key = f"k{k}-{j}"
            with db.transaction("write") as tx:
                tx.run("INSERT INTO meta (key, value) VALUES (?, ?)", (key, str(j)))
            # Returned: another connection (another process) sees it.
            with sqlite3.connect(tmp_path / "s.sqlite3") as other:
                found = other.execute("SELECT 1 FROM meta WHERE key = ?", (key,)).fetchall()
            with lock:
                seen.append(bool(found))

    threads = [threading.Thread(target=write, args=(k,)) for k in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 240 and all(seen)
    with db.transaction("count", write=False) as tx:
        assert tx.rows("SELECT COUNT(*) FROM meta")[0][0] == 240
    db.close()


def test_a_failed_block_takes_back_only_itself(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "s.sqlite3")
    with db.transaction("write") as tx:
        tx.run("INSERT INTO meta (key, value) VALUES ('a', '1')")
    with pytest.raises(ValueError, match="no"), db.transaction("write") as tx:
        tx.run("INSERT INTO meta (key, value) VALUES ('b', '1')")
        raise ValueError("no")
    with pytest.raises(DuplicateError), db.transaction("write") as tx:
        tx.run("INSERT INTO meta (key, value) VALUES ('c', '1')")
        tx.run("INSERT INTO meta (key, value) VALUES ('a', '2')")
    with db.transaction("write") as tx:
        tx.run("INSERT INTO meta (key, value) VALUES ('d', '1')")
    with db.transaction("read", write=False) as tx:
        assert tx.rows("SELECT key, value FROM meta ORDER BY key") == [("a", "1"), ("d", "1")]
    db.close()


def test_a_foreign_or_newer_file_is_refused_in_one_line(tmp_path: Path) -> None:
    text = tmp_path / "not.sqlite3"
    text.write_text("hello, this is not a database at all" * 100)
    with pytest.raises(
        ServeStoreError, match="not.sqlite3: cannot open the database: file is not a database"
    ):
        open_database(str(text), folder=tmp_path)
    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(ServeStoreError, match=r"made by a newer quizgym \(schema 99\)"):
        open_database(str(newer), folder=tmp_path)
