"""The teacher's pages of ``quizgym serve`` over plain HTTP: the class graded by ``quizgym grade``
from the store, the report's item analysis, the review queue's decisions (written as the file
``grade --review`` reads, and the same scores from it) and the gradebooks."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import ROOT, Client, Server, forms_of, gzipped, links, write_class

pytest.importorskip("uvicorn")

BANK = """\
bank: optics
title: Lenses
questions:
  - id: focal
    type: numeric
    prompt: A lens has power {d} dioptres. What is its focal length?
    params: {d: {choices: [2, 4, 5, 8]}}
    answer: 1/d
    units: m
    tolerance: {rel: 0.01}
    mistakes:
      - {answer: d, feedback: That is the power itself., tag: inverse}
  - id: pick
    type: multiple_choice
    shuffle: true
    prompt: Which lens converges light?
    choices:
      - {text: convex, correct: true}
      - {text: concave}
      - {text: a flat pane}
  - id: why
    type: free_text
    prompt: Why does a magnifying glass enlarge?
    model_answer: The object sits inside the focal length, so the image is virtual and larger.
    rubric:
      - {criterion: focal, any_of: [focal length, focus], points: 1}
      - {criterion: virtual, any_of: [virtual], points: 1}
"""
STUDENTS = ("amy", "ben", "cat", "dan", "eve", "fay")
ANSWERS = {
    "amy": {"focal": "RIGHT", "pick": "convex", "why": "it is inside the focal length"},
    "ben": {"focal": "POWER", "pick": "concave", "why": "it bends light"},
    "cat": {"focal": "RIGHT", "pick": "convex", "why": "a virtual image inside the focus"},
    "dan": {"focal": "3 m", "pick": "a flat pane", "why": "it bends light"},
    "eve": {"focal": "RIGHT", "pick": "convex", "why": "magic"},
    "fay": {"focal": "POWER", "pick": "convex", "why": "because"},
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path, Client]]:
    folder = tmp_path_factory.mktemp("teacher")
    (folder / "optics.yaml").write_text(BANK, encoding="utf-8")
    (folder / "roster.csv").write_text(
        "student,name\n" + "".join(f"{s},{s.title()}\n" for s in STUDENTS), encoding="utf-8"
    )
    data = folder / "data"
    with Server(
        str(folder / "optics.yaml"), "--roster", str(folder / "roster.csv"), "--data", str(data),
        "--quiz-ids", "focal,pick,why", "--rate", "1000",
    ) as server:  # fmt: skip
        for who in STUDENTS:
            client = Client(server)
            client.sign_in(links(data)[who])
            page = client.get("/quiz")
            reply = client.submit(page, _quiz_answers_for(who, page.text))
            assert reply.status == 303, reply.text
        teacher = Client(server)
        teacher.sign_in(server.teacher)
        yield server, folder, teacher


def _quiz_answers_for(who: str, page: str) -> dict[str, str | list[str]]:
    """``who``'s answers as typed for their own version (the letter of the choice named)."""
    wanted = ANSWERS[who]
    found = re.search(r"power (\S+) dioptres", page)
    assert found is not None, page
    d = float(found[1])
    focal = {"RIGHT": f"{1 / d:g} m", "POWER": f"{d:g} m"}.get(wanted["focal"], wanted["focal"])
    return {"focal": focal, "pick": _letter(page, wanted["pick"]), "why": wanted["why"]}


def _letter(page: str, text: str) -> str:
    """The letter a choice's text is shown with on this student's page."""
    for value, label in re.findall(
        r'name="pick" value="([A-Z])"[^>]*>\s*<label[^>]*>(?:<[^>]+>)*([^<]*)', page
    ):
        if label.strip().removeprefix(f"{value}.").strip().startswith(text):
            return str(value)
    raise AssertionError(f"no choice {text!r} on the page")


def _scores(text: str, column: str = "score") -> dict[str, str]:
    rows = list(csv.reader(io.StringIO(text)))
    at = rows[0].index(column)
    return {r[0]: r[at] for r in rows[1:]}


def test_the_class_is_graded_by_quizgym_grade_and_analysed_as_the_report(
    graded: tuple[Server, Path, Client],
) -> None:
    server, folder, teacher = graded
    home = teacher.get("/teacher")
    assert home.status == 200, home.text
    assert "Nobody has answered" not in home.text
    items = teacher.get("/teacher/items")
    assert items.status == 200
    for words in ("Cronbach", "Facility", "Discrimination", "Most common wrong answers"):
        assert words in items.text, words
    assert "<style" not in items.text and "<script" not in items.text
    # The same figures as the report of quizgym grade on the export.
    out = folder / "cli"
    _export_and_grade(server, folder, out)
    report = (out / "report.html").read_text(encoding="utf-8")
    start = report.index("<h2>Items</h2>")
    end = report.index("</table>", start)
    assert report[start:end] in items.text
    grades = teacher.get("/teacher/grades.csv")
    assert grades.status == 200
    assert grades.body == (out / "grades.csv").read_bytes()
    canvas = teacher.get("/teacher/gradebook-canvas.csv")
    assert canvas.status == 200 and canvas.text.startswith('"Student","ID",')


def _export_and_grade(
    server: Server, folder: Path, out: Path, *, review: Path | None = None
) -> subprocess.CompletedProcess[str]:
    data = folder / "data"
    env = {"PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "quizgym", "serve", "export", "--data", str(data), "-o",
         str(folder / "attempts.jsonl")],
        check=True, capture_output=True, text=True, env=env,
    )  # fmt: skip
    args = [
        *(sys.executable, "-m", "quizgym", "grade", str(folder / "optics.yaml")),
        *(str(folder / "attempts.jsonl"), "--issued", str(data / "issued.json"), "-o", str(out)),
    ]
    if review is not None:
        args += ["--review", str(review)]
    return subprocess.run(args, capture_output=True, text=True, env=env)


def _queue(teacher: Client) -> dict[str, tuple[str, dict[str, str]]]:
    """The review queue's forms by the answer each is about: (action, hidden fields)."""
    page = teacher.get("/teacher/review")
    assert page.status == 200, page.text
    heads = re.findall(r"<h2 id=\"r\d+\">[^<]*“([^”]*)”</h2>", page.text)
    forms = [f for f in forms_of(page.text) if "fingerprint" in f.hidden]
    assert len(heads) == len(forms)
    return {answer: (f.action, f.hidden) for answer, f in zip(heads, forms, strict=True)}


def test_review_decisions_are_applied_and_written_as_grade_review_reads_them(
    graded: tuple[Server, Path, Client],
) -> None:
    server, folder, teacher = graded
    queue = _queue(teacher)
    assert {"it bends light", "magic", "because"} <= set(queue)
    before = _scores(teacher.get("/teacher/gradebook.csv").text)
    # Refused as grade --review refuses them, with the reason, and nothing kept.
    action, hidden = queue["magic"]
    for score, why in (("3", "outside 0"), ("lots", "not a number"), ("", "without a score")):
        reply = teacher.post(action, [*hidden.items(), ("score", score), ("comment", "hm")])
        assert reply.status == 422 and why in reply.text, reply.text
        assert 'name="comment" value="hm"' in reply.text  # what was typed is kept
    assert _scores(teacher.get("/teacher/gradebook.csv").text) == before
    # Two students said "it bends light": one decision scores both.
    action, hidden = queue["it bends light"]
    reply = teacher.post(
        action, [*hidden.items(), ("score", "1"), ("comment", "Half: say where the object is.")]
    )
    assert reply.status == 303, reply.text
    after = _scores(teacher.get("/teacher/gradebook.csv").text)
    assert float(after["ben"]) == float(before["ben"]) + 1
    assert float(after["dan"]) == float(before["dan"]) + 1
    assert {s: after[s] for s in ("amy", "cat", "eve", "fay")} == {
        s: before[s] for s in ("amy", "cat", "eve", "fay")
    }
    page = teacher.get("/teacher/review").text
    assert 'value="1"' in page and "Half: say where the object is." in page
    # The page lists the scores the decision changed; no LMS is registered, so none is sent.
    changed = re.findall(r"<li>([^<]*)</li>", page.split('class="changed">')[1].split("</ul>")[0])
    assert changed == [
        f"{who}: {float(before[who]):g} → {float(after[who]):g} of 4" for who in ("ben", "dan")
    ]
    # The downloaded decisions, given to quizgym grade with the export, give the same scores.
    decisions = teacher.get("/teacher/decisions.csv")
    assert decisions.status == 200
    (folder / "decisions.csv").write_bytes(decisions.body)
    done = _export_and_grade(server, folder, folder / "cli-review", review=folder / "decisions.csv")
    assert done.returncode == 0, done.stderr
    assert "2 answers scored by a teacher" in done.stdout
    cli = (folder / "cli-review" / "grades.csv").read_text(encoding="utf-8")
    assert cli.encode("utf-8") == teacher.get("/teacher/grades.csv").body
    assert {s: float(v) for s, v in _scores(cli).items()} == {s: float(v) for s, v in after.items()}
    responses = (folder / "cli-review" / "responses.csv").read_text(encoding="utf-8")
    assert "Half: say where the object is." in responses
    # An empty score and note undo the decision.
    reply = teacher.post(action, [*hidden.items(), ("score", ""), ("comment", "")])
    assert reply.status == 303
    assert _scores(teacher.get("/teacher/gradebook.csv").text) == before


def test_a_forged_decision_is_refused(graded: tuple[Server, Path, Client]) -> None:
    server, _, teacher = graded
    action, hidden = next(iter(_queue(teacher).values()))
    forged = {**hidden, "fingerprint": "q0123456789-a0123456789ab"}
    reply = teacher.post(action, [*forged.items(), ("score", "1")])
    assert reply.status == 422 and "not in the review queue" in reply.text
    no_csrf = {k: v for k, v in hidden.items() if k != "_csrf"}
    assert teacher.post(action, [*no_csrf.items(), ("score", "1")]).status == 403
    student = Client(server)
    student.sign_in(links(server_data(server))["amy"])
    for path in ("/teacher", "/teacher/items", "/teacher/review", "/teacher/grades.csv",
                 "/teacher/decisions.csv"):  # fmt: skip
        assert student.get(path).status == 403, path
    assert student.post(action, [*hidden.items(), ("score", "1")]).status == 403


def server_data(server: Server) -> Path:
    return Path(server.args[server.args.index("--data") + 1])


def test_every_teacher_page_is_small(graded: tuple[Server, Path, Client]) -> None:
    _, _, teacher = graded
    for path in ("/teacher", "/teacher/items", "/teacher/review"):
        reply = teacher.get(path)
        assert reply.status == 200
        assert gzipped(reply.body) <= 15 * 1024, (path, gzipped(reply.body))


def test_the_teacher_pages_stay_small_for_a_class_of_sixty(tmp_path: Path) -> None:
    students = tuple(f"student{k:02d}" for k in range(60))
    bank, roster = write_class(tmp_path, students)
    data = tmp_path / "data"
    quiz = "mc-pick,mc-several,num-loss,num-parts,tf-plain,ste-claim,ft-why"
    with Server(str(bank), "--roster", str(roster), "--data", str(data), "--quiz-ids", quiz,
                "--rate", "1000") as server:  # fmt: skip
        for k, who in enumerate(students):
            client = Client(server)
            client.sign_in(links(data)[who])
            page = client.get("/quiz")
            answers: dict[str, str | list[str]] = {
                "mc-pick": "ABC"[k % 3], "mc-several": ["A", "B"][: 1 + k % 2],
                "num-loss": f"{0.5 + k / 40:.3f}", "num-parts.selected": str(6 + k % 5),
                "num-parts.masked": str(4 + k % 3), "tf-plain": "true" if k % 4 else "false",
                "ste-claim": "AB"[k % 2], "ft-why": f"answer number {k} about the context",
            }  # fmt: skip
            assert client.submit(page, answers).status == 303
        teacher = Client(server)
        teacher.sign_in(server.teacher)
        first = teacher.get("/teacher/review")
        assert 'href="/teacher/review?page=3"' in first.text  # 60 answers, 20 a page
        assert len(forms_of(first.text)) == 20
        for path in ("/teacher", "/teacher/items", "/teacher/review", "/teacher/review?page=3"):
            reply = teacher.get(path)
            assert reply.status == 200, path
            assert gzipped(reply.body) <= 15 * 1024, (path, gzipped(reply.body))
