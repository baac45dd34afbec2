"""``quizgym serve --db postgresql://…``: the same schema on a real PostgreSQL server (Debian's,
started here in a temporary folder), shared by two servers at once."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner
from serve_helpers import Client, Postgres, Server, forms_of, links, verdicts, write_class

from quizgym.cli import cli

pytest.importorskip("uvicorn")
pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    try:
        server = Postgres()
    except FileNotFoundError:
        if os.environ.get("CI") == "true":
            pytest.fail("PostgreSQL is not installed (scripts/setup.d/60-postgresql.sh)")
        pytest.skip("PostgreSQL is not installed (make test installs it)")
    yield server
    server.stop()


def test_two_servers_share_one_postgresql_store(postgres: Postgres, tmp_path: Path) -> None:
    bank, roster = write_class(tmp_path)
    data = tmp_path / "data"
    args = (str(bank), "--roster", str(roster), "--data", str(data), "--db", postgres.url,
            "--quiz-ids", "num-loss,mc-pick,ft-why", "--attempts", "2",
            "--rate", "1000")  # fmt: skip
    with Server(*args) as one, Server(*args) as two:
        first, second = Client(one), Client(two)
        link = links(data)["ann"].split("/in/", 1)[1]
        first.sign_in(f"/in/{link}")
        second.sign_in(f"/in/{link}")
        # Practice on one server, go on on the other: the schedule is shared.
        page = first.get("/practice")
        assert page.form().names() == ["mc-pick"]
        done = first.submit(page, {"mc-pick": "A"}).headers["location"]
        assert verdicts(second.get(done).text) == verdicts(first.get(done).text)
        assert second.get("/practice").form().names() == ["mc-several"]
        # The same form sent to both servers at once (one session behind a load balancer) is
        # recorded once.
        page = second.get("/practice")
        same = Client(one)
        same.cookies = dict(second.cookies)
        with ThreadPoolExecutor(2) as pool:
            replies = list(pool.map(lambda c: c.submit(page, {"mc-several": "A"}), [same, second]))
        assert {r.status for r in replies} == {303}
        assert len({r.headers["location"] for r in replies}) == 1
        # The quiz's attempt cap holds across both.
        assert first.submit(first.get("/quiz"), {"num-loss": "1"}).status == 303
        answers = {"num-loss": "ln 2", "ft-why": "it keeps context"}
        assert second.submit(second.get("/quiz"), answers).status == 303
        final = first.get("/quiz").text
        assert "Attempts: 2 used, 0 left." in final
        assert "<form" not in final
        teacher = Client(one)
        teacher.sign_in(one.teacher)
        assert "<td>ann</td><td>Ann</td><td>2</td>" in teacher.get("/teacher").text
        # A review decision made on one server is applied on the other.
        queue = teacher.get("/teacher/review")
        form = next(f for f in forms_of(queue.text) if "fingerprint" in f.hidden)
        decided = teacher.post(form.action, [*form.hidden.items(), ("score", "0")])
        assert decided.status == 303, decided.text
        other = Client(two)
        other.sign_in(two.teacher)
        assert "1 distinct answer to review, 1 decided" in other.get("/teacher").text
        assert '"ft-why","","it keeps context"' in other.get("/teacher/decisions.csv").text
    out = tmp_path / "attempts.jsonl"
    result = CliRunner().invoke(
        cli, ["serve", "export", "--data", str(data), "--db", postgres.url, "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith('{"student": "ann", "answers": {"num-loss": "ln 2"')
    assert not (data / "serve.sqlite3").exists()
    shutil.rmtree(data)


def test_an_unreachable_server_is_one_line(tmp_path: Path) -> None:
    bank, roster = write_class(tmp_path)
    url = "postgresql://nobody:secret@127.0.0.1:9/none"
    with pytest.raises(RuntimeError) as refused:
        Server(str(bank), "--roster", str(roster), "--data", str(tmp_path / "d"), "--db", url)
    message = str(refused.value)
    assert "Error: postgresql://nobody:***@127.0.0.1:9/none: cannot connect" in message
    assert "secret" not in message.split("Error:", 1)[1]
