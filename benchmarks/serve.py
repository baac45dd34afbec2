"""``quizgym serve`` under load on loopback: graded answers per second against the same
server's static page (its stylesheet) in the same run, with latency percentiles.

32 clients (``--clients``), each signed in as its own student with a kept-alive connection,
first fetch the stylesheet (``--static`` requests in all), then post answers to the bundled
bank's four-part numeric question ``num-mask-counts`` (``--answers`` in all), each to a form
of its own (a fresh variant, handed out before the timing starts), every one graded by the
engine and committed to SQLite (WAL, ``synchronous=FULL``) before its 303 is sent. Each phase
stops at its count or after ``--seconds``. At the end every answer must be a row of the
database. Goals (issue 29): answers/s ≥ 50 % of the static page's requests/s, p99 ≤ 100 ms.

The load generator is a minimal asyncio HTTP/1.1 client on the same cores (an httpx client
caps far lower; see shared/reference/web-practice.md).

Run: ``.venv/bin/python benchmarks/serve.py`` (``--db postgresql://…`` for PostgreSQL).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "num-mask-counts"
PARTS = ("selected", "masked", "random", "unchanged")


class Connection:
    """One kept-alive HTTP/1.1 connection with a cookie."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.cookie = ""
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: bytes = b""
    ) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        if self.cookie:
            head.append(f"Cookie: {self.cookie}")
        if body:
            head += [
                "Content-Type: application/x-www-form-urlencoded",
                f"Content-Length: {len(body)}",
            ]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            key, _, value = line.decode().partition(":")
            headers[key.strip().lower()] = value.strip()
        data = await self.reader.readexactly(int(headers.get("content-length", "0")))
        if "set-cookie" in headers:
            self.cookie = headers["set-cookie"].split(";")[0]
        return status, headers, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user + system, all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def phase(
    jobs: list[list[tuple[str, str, bytes]]], conns: list[Connection], *, seconds: float,
    expect: int,
) -> tuple[int, float, list[float]]:  # fmt: skip
    """Run each client's requests in turn, all clients at once; (done, elapsed, latencies)."""
    deadline = time.perf_counter() + seconds
    latencies: list[float] = []
    done = 0

    async def client(conn: Connection, mine: list[tuple[str, str, bytes]]) -> None:
        nonlocal done
        for method, path, body in mine:
            if time.perf_counter() > deadline:
                return
            start = time.perf_counter()
            status, _, _ = await conn.request(method, path, body)
            latencies.append(time.perf_counter() - start)
            if status != expect:
                raise RuntimeError(f"{method} {path}: status {status}, not {expect}")
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(client(c, j) for c, j in zip(conns, jobs, strict=True)))
    return done, time.perf_counter() - start, latencies


def make_forms(data: Path, roster: Path, students: list[str], per: int) -> dict[str, list[str]]:
    """Hand each student ``per`` forms of the question (fresh variants), before any timing."""
    sys.path.insert(0, str(ROOT))
    from quizgym.serve import prepare

    ready = prepare(["bert-mlm"], roster=roster, data=data)
    room = ready.room
    forms: dict[str, list[str]] = {}
    for student in students:
        with room.db.transaction("seed the benchmark") as tx:
            seed = room.secret.seed("practice", student, "bert-mlm", QUESTION, "0")
            tx.run(
                "INSERT INTO shown (token, student, mode, bank_id, item_id, seed, review,"
                " shown_at) VALUES (?, ?, 'practice', 'bert-mlm', ?, ?, 0, '2026-01-01')",
                (f"bench-{student}", student, QUESTION, seed),
            )
        tokens, last = [], f"bench-{student}"
        for _ in range(per):
            form = room.practice_form(student, fresh=last)
            assert form is not None
            tokens.append(form.token)
            last = form.token
        forms[student] = tokens
    room.db.close()
    return forms


async def run(args: argparse.Namespace, folder: Path) -> int:
    students = [f"s{k:02d}" for k in range(args.clients)]
    roster = folder / "roster.csv"
    roster.write_text("student\n" + "\n".join(students) + "\n")
    data = folder / "data"
    per = -(-args.answers // args.clients)
    forms = make_forms(data, roster, students, per + 1)  # one each to warm up with
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "quizgym", "serve", "bert-mlm", "--roster", str(roster),
               "--data", str(data), "--port", "0", "--rate", "1000000"]  # fmt: skip
    if args.db:
        command += ["--db", args.db]
    command += ["--sync", args.sync]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        parsed = urllib.parse.urlsplit(url)
        host, port = parsed.hostname or "127.0.0.1", parsed.port or 0
        links = dict(
            line.split(",", 1) for line in (data / "links.csv").read_text().splitlines()[1:]
        )
        conns = [Connection(host, port) for _ in students]
        csrf: dict[str, str] = {}
        for conn, student in zip(conns, students, strict=True):
            await conn.request("GET", urllib.parse.urlsplit(links[student]).path)
            _, _, page = await conn.request("GET", "/practice")
            text = page.decode()
            csrf[student] = text.split('name="_csrf" value="', 1)[1].split('"', 1)[0]
        rng = random.Random(7)

        def answer(student: str, token: str) -> tuple[str, str, bytes]:
            pairs = [("_token", token), ("_csrf", csrf[student])] + [
                (f"{QUESTION}.{part}", str(rng.choice([12, 60, 48, 6, 3.2, 51, 9])))
                for part in PARTS
            ]
            return ("POST", "/practice", urllib.parse.urlencode(pairs).encode())

        # Warm up, untimed: sympy's first key, the question's keys for these variants.
        for conn, student in zip(conns, students, strict=True):
            status, _, _ = await conn.request(*answer(student, forms[student].pop(0)))
            assert status == 303, status
        per_static = -(-args.static // args.clients)
        static_jobs = [[("GET", "/static/quizgym.css", b"")] * per_static for _ in students]
        answer_jobs = [[answer(s, token) for token in forms[s]] for s in students]
        cpu = [(cpu_seconds(server.pid), time.process_time())]
        n_static, t_static, lat_static = await phase(
            static_jobs, conns, seconds=args.seconds, expect=200
        )
        cpu.append((cpu_seconds(server.pid), time.process_time()))
        spy = None
        if args.py_spy:  # sample the server's threads while it grades (collapsed stacks)
            spy = subprocess.Popen(
                ["py-spy", "record", "--pid", str(server.pid), "--format", "raw", "--threads",
                 "--rate", "250", "--nonblocking", "-o", args.py_spy],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            await asyncio.sleep(1.0)
        n_answers, t_answers, lat_answers = await phase(
            answer_jobs, conns, seconds=args.seconds, expect=303
        )
        cpu.append((cpu_seconds(server.pid), time.process_time()))
        if spy is not None:
            spy.send_signal(2)
            spy.wait(30)
        for conn in conns:
            conn.close()
    finally:
        server.terminate()
        server.wait(10)
    rows = n_answers
    if not args.db:
        with sqlite3.connect(data / "serve.sqlite3") as db:
            (rows,) = db.execute("SELECT COUNT(*) FROM submission").fetchone()
        rows -= len(students)  # the warm-up answers
    static_rate, answer_rate = n_static / t_static, n_answers / t_answers
    p50, p99 = percentile(lat_answers, 0.50) * 1000, percentile(lat_answers, 0.99) * 1000
    print(f"clients {args.clients} · static {n_static} requests in {t_static:.2f} s: "
          f"{static_rate:,.0f} req/s (p50 {percentile(lat_static, .5) * 1000:.1f} ms, "
          f"p99 {percentile(lat_static, .99) * 1000:.1f} ms)")  # fmt: skip
    print(f"answers {n_answers} graded in {t_answers:.2f} s: {answer_rate:,.0f} answers/s "
          f"(p50 {p50:.1f} ms, p99 {p99:.1f} ms, mean "
          f"{statistics.fmean(lat_answers) * 1000:.1f} ms)")  # fmt: skip
    (s0, c0), (s1, c1), (s2, c2) = cpu
    print(f"CPU per request: static {1000 * (s1 - s0) / n_static:.2f} ms in the server, "
          f"{1000 * (c1 - c0) / n_static:.2f} ms in the load generator; answer "
          f"{1000 * (s2 - s1) / n_answers:.2f} ms in the server, "
          f"{1000 * (c2 - c1) / n_answers:.2f} ms in the load generator")  # fmt: skip
    ratio = answer_rate / static_rate
    print(f"answers/s ÷ static req/s = {ratio:.2f} (goal ≥ 0.50); p99 goal ≤ 100 ms; "
          f"rows {rows} of {n_answers} answers")  # fmt: skip
    return 0 if rows == n_answers else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--static", type=int, default=5000, help="static requests in all")
    parser.add_argument("--answers", type=int, default=2000, help="answers in all")
    parser.add_argument("--seconds", type=float, default=60.0, help="each phase at most")
    parser.add_argument("--db", help="postgresql://… (default: SQLite in the data folder)")
    parser.add_argument("--sync", choices=["full", "normal"], default="full", help="SQLite's")
    parser.add_argument(
        "--py-spy", metavar="FILE", help="sample the server with py-spy while it grades"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        sys.exit(asyncio.run(run(args, Path(folder))))


if __name__ == "__main__":
    main()
