"""One engine, provable: the verdicts the web pages show are those ``quizgym grade`` gives the
export (``serve export`` + ``grade --issued``), and those the drill's single-answer path gives,
on answers typed over HTTP and on generated ones."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serve_helpers import Client, Server, links, verdicts, write_class

from quizgym.answers import grade_response
from quizgym.cli import cli
from quizgym.grading.run import grade_submissions
from quizgym.issued import read_issued
from quizgym.serve import prepare
from quizgym.serve.engine import Classroom, Reask
from quizgym.solver import CompiledBank
from quizgym.solver.cache import open_bank

pytest.importorskip("uvicorn")

QUIZ = "mc-pick,mc-several,num-loss,num-parts,tf-plain,ste-claim,ft-why"


def graded(folder: Path, bank: Path, jsonl: Path, issued: Path) -> dict[tuple[str, str], str]:
    """``quizgym grade``'s verdict of each (student, slot)."""
    out = folder / "graded"
    result = CliRunner().invoke(
        cli, ["grade", str(bank), str(jsonl), "--issued", str(issued), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    with (out / "responses.csv").open(encoding="utf-8") as stream:
        return {(r["student"], r["question"]): r["verdict"] for r in csv.DictReader(stream)}


def test_grade_regrades_the_export_with_the_web_verdicts(tmp_path: Path) -> None:
    bank, roster = write_class(tmp_path)
    data = tmp_path / "data"
    typed = {  # several attempts each; a later one may answer only some slots
        "ann": [],  # below, once her version is known
        "bob": [
            {"num-loss": "0.3", "mc-several": ["A", "B"], "ste-claim": "B"},
            {"num-loss": "1000", "mc-several": ["A"]},
            {"num-loss": "", "tf-plain": "false"},
        ],
        "cy": [{"mc-pick": "C", "num-parts.selected": "6 tokens", "ft-why": "no idea"}],
    }  # fmt: skip
    web: dict[tuple[str, str], str] = {}
    with Server(str(bank), "--roster", str(roster), "--data", str(data), "--quiz-ids", QUIZ,
                "--rate", "1000") as server:  # fmt: skip
        issued = read_issued(data / "issued.json")
        record = issued.student("ann")
        assert record is not None
        key = float(issued.versions["num-parts"][record.versions["num-parts"]].keys[0])
        wrong = key + 6  # masked = 0.8 × wrong is right for it (error carried forward) ...
        typed["ann"] = [
            {"num-loss": "ln 2", "num-parts.selected": f"{wrong:g}",
             "num-parts.masked": f"{0.8 * wrong:g}", "mc-pick": "A", "tf-plain": "true",
             "ft-why": "context matters"},
            {"num-parts.selected": f"{key:g}"},  # ... and wrong once selected is put right
        ]  # fmt: skip
        for student, attempts in typed.items():
            client = Client(server)
            client.sign_in(links(data)[student])
            for k, answers in enumerate(attempts):
                page = client.get("/quiz")
                if student == "ann" and k == 1:
                    assert verdicts(page.text)["num-parts.masked"] == "correct"
                form = page.form()
                pairs = list(form.hidden.items())
                for name, value in answers.items():
                    pairs += [(name, v) for v in (value if isinstance(value, list) else [value])]
                sent = client.post("/quiz", pairs)
                assert sent.status == 303, sent.text
            shown = verdicts(client.get("/quiz").text)
            web.update({(student, slot): v for slot, v in shown.items()})
    assert web[("ann", "num-parts.masked")] == "incorrect"  # regraded beside the new selected
    assert web[("ann", "num-parts.selected")] == "correct"
    assert web[("bob", "num-loss")] == "blank"  # the last attempt counts
    out = tmp_path / "attempts.jsonl"
    result = CliRunner().invoke(cli, ["serve", "export", "--data", str(data), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("wrote 3 students to ")
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["student"] for r in records] == ["ann", "bob", "cy"]
    batch = graded(tmp_path, bank, out, data / "issued.json")
    assert {k: v for k, v in batch.items() if k in web} == web
    missing = {k: v for k, v in batch.items() if k not in web}
    assert set(missing.values()) <= {"blank"}  # slots never answered on the web


@pytest.fixture(scope="module")
def classroom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Classroom, Path]]:
    folder = tmp_path_factory.mktemp("parity")
    bank, roster = write_class(folder)
    ready = prepare([str(bank)], roster=roster, data=folder / "data",
                    quiz_ids=QUIZ.split(","), rate=10**6)  # fmt: skip
    yield ready.room, folder
    ready.room.db.close()


NUMBERS = st.one_of(
    st.sampled_from(
        ["ln 2", "0.6931", "0.693", "0.69", "2.3026", "0.30103", "1/2", "-ln(0.25)", "ln 10",
         "18", "14.4", "12", "9.6", "6", "4.8", "18 tokens", "1e400", "nan", "", "x", "2 m/s",
         "0,5", "1.386", "1.3863 nats", "3"]
    ),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda x: f"{x:.4g}"),
    st.text(alphabet="0123456789.-/ eln()", max_size=8),
)  # fmt: skip
CHOICES = st.one_of(st.sampled_from(["A", "B", "C", "D", "1", "2", "a c", "two", ""]),
                    st.text(max_size=4))  # fmt: skip
TRUTH = st.sampled_from(["true", "false", "t", "F", "yes", "0", "maybe", ""])
FREE = st.sampled_from(["context", "the context must remain", "", "no idea"])

ANSWERS = st.fixed_dictionaries(
    {
        "mc-pick": CHOICES, "mc-several": CHOICES, "num-loss": NUMBERS,
        "num-parts.selected": NUMBERS, "num-parts.masked": NUMBERS, "tf-plain": TRUTH,
        "ste-claim": CHOICES, "ft-why": FREE,
    }
)  # fmt: skip


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(answers=ANSWERS, student=st.sampled_from(["ann", "bob", "cy"]))
def test_web_drill_and_batch_verdicts_agree(
    classroom: tuple[Classroom, Path], answers: dict[str, str], student: str
) -> None:
    room, folder = classroom
    book = open_bank(str(folder / "web.yaml"))
    drill = drill_verdicts(room, book, student, answers)
    # The batch grader, on the same answers as a JSON Lines record.
    jsonl = folder / "one.jsonl"
    jsonl.write_text(json.dumps({"student": student, "answers": answers}) + "\n")
    issued = folder / "data" / "issued.json"
    run = grade_submissions(book, [jsonl], out_dir=folder / "out", issued=issued)
    assert not run.rejected
    with (folder / "out" / "responses.csv").open(encoding="utf-8") as stream:
        batch = {r["question"]: r["verdict"] for r in csv.DictReader(stream)}
    assert batch == drill
    # The web's path: the form's fields read back, graded and committed. An unreadable answer
    # is asked again, nothing recorded: it is sent again blank, as a student would clear it.
    unreadable = {s for s, v in drill.items() if v == "invalid"}
    if unreadable:
        view = room.quiz_view(student)
        assert view.form is not None
        fields = [("_token", view.form.token), *answers.items()]
        with pytest.raises(Reask) as asked:
            room.quiz_answer(student, view.form.token, fields, finish=False)
        assert set(asked.value.messages) == unreadable
        answers = {k: "" if k in unreadable else v for k, v in answers.items()}
        drill = drill_verdicts(room, book, student, answers)
    view = room.quiz_view(student)
    assert view.form is not None
    fields = [("_token", view.form.token), *answers.items()]
    result = room.quiz_answer(student, view.form.token, fields, finish=False)
    assert {shown.slot: shown.verdict for shown in result.slots} == drill


def drill_verdicts(
    room: Classroom, book: CompiledBank, student: str, answers: dict[str, str]
) -> dict[str, str]:
    """The drill's path: grade_response on the student's issued version, part by part."""
    out: dict[str, str] = {}
    for question, variant, _ in room.quiz_variants(student):
        earlier: dict[str, str] = {}
        for slot in book.slots_of(question):
            text = answers.get(slot.id) or None
            verdict = grade_response(
                book, question, text, variant=variant, part=slot.part, earlier=earlier
            )
            out[slot.id] = str(verdict.status)
            if slot.part is not None and text is not None:
                earlier[slot.part] = text
    return out


def test_the_practice_export_holds_every_practice_answer_regradable_from_its_seed(
    tmp_path: Path,
) -> None:
    bank, roster = write_class(tmp_path, ("ann", "bob"))
    data = tmp_path / "data"
    typed = {"num-parts.selected": "12 tokens", "num-parts.masked": "9", "num-loss": "0.69",
             "tf-plain": "true", "ste-claim": "B", "ft-why": "context", "mc-pick": "B",
             "mc-several": ["A", "C"]}  # fmt: skip
    shown = 0
    with Server(str(bank), "--roster", str(roster), "--data", str(data), "--quiz-ids",
                "mc-pick", "--rate", "1000") as server:  # fmt: skip
        for who in ("ann", "bob"):
            client = Client(server)
            client.sign_in(links(data)[who])
            for _ in range(5):
                page = client.get("/practice")
                names = page.form().names()
                reply = client.submit(page, {n: typed[n] for n in names})
                assert reply.status == 303, reply.text
                shown += len(names)
            quiz = client.get("/quiz")
            assert client.submit(quiz, {"mc-pick": "A"}).status == 303
    out, practice = tmp_path / "attempts.jsonl", tmp_path / "practice.jsonl"
    result = CliRunner().invoke(
        cli, ["serve", "export", "--data", str(data), "-o", str(out), "--practice", str(practice)]
    )
    assert result.exit_code == 0, result.output
    assert f"wrote {shown} practice answers to {practice}" in result.output
    records = [json.loads(line) for line in practice.read_text(encoding="utf-8").splitlines()]
    assert len(records) == shown
    assert {r["student"] for r in records} == {"ann", "bob"}
    quiz_only = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [set(r["answers"]) for r in quiz_only] == [{"mc-pick"}, {"mc-pick"}]
    book = open_bank(str(bank))
    earlier: dict[int, dict[str, str]] = {}
    for r in records:
        question = book.bank.question(r["question"])
        part = r["slot"].split(".", 1)[1] if "." in r["slot"] else None
        before = earlier.setdefault(r["submission"], {})
        variant = book.variant(question, seed=r["seed"])
        again = grade_response(book, question, r["answer"], variant=variant, part=part,
                               earlier=before)  # fmt: skip
        assert (str(again.status), again.score) == (r["verdict"], r["score"]), r
        if part is not None:
            before[part] = r["answer"]
        assert r["answered_at"] and r["engine"] and isinstance(r["scheduled"], bool)
