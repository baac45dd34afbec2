"""The matching type, on a statistics bank: the bank format and its errors, one answer and a
class graded alike and checked against an independent count, worksheets and keys, and the
exports that write it (Moodle XML, GIFT) or refuse it with the reason."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest
from export_checkers import parse_gift, strip_tags
from lxml import etree

from quizgym.answers import Status, grade_response
from quizgym.errors import BankError, ExportError
from quizgym.export import exporter
from quizgym.grading.run import grade_submissions
from quizgym.loader import load_bank
from quizgym.model import Matching
from quizgym.render.documents import render_key, render_worksheet
from quizgym.solver import compile_bank
from quizgym.types import choices_of, pairing_of

STATS = """
bank: stats-match
title: Distributions
defaults: {points: 2}
questions:
  - id: shapes
    type: matching
    prompt: Pair each distribution with what it counts or measures.
    shuffle: true
    pairs:
      - id: binom
        item: Binomial
        answer: successes in n independent trials
        feedback: The binomial counts successes out of a fixed number of trials.
        tag: binomial-vs-poisson
      - {id: pois, item: Poisson, answer: events in a fixed interval, points: 1}
      - {id: geom, item: Geometric, answer: trials until the first success}
    distractors: [the spread of a sample mean]
  - id: fixed
    type: matching
    prompt: Pair each test with its statistic.
    pairs:
      - {id: t, item: t test, answer: a mean}
      - {id: chi, item: chi-squared test, answer: counts in categories}
      - {id: f, item: F test, answer: two variances}
"""


@pytest.fixture
def bank_path(tmp_path: Path) -> Path:
    path = tmp_path / "stats.yaml"
    path.write_text(STATS, encoding="utf-8")
    return path


def _bank(tmp_path: Path, pairs: str, extra: str = "") -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "bank: bad\ntitle: Bad\nquestions:\n  - id: m\n    type: matching\n    prompt: Pair.\n"
        f"    pairs:\n{pairs}{extra}",
        encoding="utf-8",
    )
    return path


TWO = "      - {id: a, item: A, answer: x}\n      - {id: b, item: B, answer: y}\n"


@pytest.mark.parametrize(
    ("pairs", "extra", "message"),
    [
        (
            "      - {id: a, item: A, answer: x}\n      - {id: b, item: B, answer: x}\n",
            "",
            "two items pair with 'x', but the question is one-to-one",
        ),
        (
            "      - {id: a, item: A, answer: x}\n      - {id: a, item: B, answer: y}\n",
            "",
            "item id 'a' is used twice",
        ),
        (TWO, "    distractors: [x]\n", "distractor 'x' is also an item's answer"),
        ("      - {id: a, item: A, answer: x}\n", "", "at least 2 items"),
        (TWO, "    partz: 1\n", "partz"),
    ],
)
def test_a_bad_matching_question_is_refused_with_where_and_what(
    tmp_path: Path, pairs: str, extra: str, message: str
) -> None:
    with pytest.raises(BankError) as caught:
        load_bank(_bank(tmp_path, pairs, extra))
    text = str(caught.value)
    assert message in text
    assert "bad.yaml:" in text


def test_answers_may_repeat_when_the_question_says_so(tmp_path: Path) -> None:
    pairs = "      - {id: a, item: A, answer: x}\n      - {id: b, item: B, answer: x}\n"
    bank = load_bank(_bank(tmp_path, pairs, "    one_to_one: false\n"))
    question = bank.questions[0]
    assert isinstance(question, Matching)
    assert question.answers == ["x"]
    assert bank.slot_ids() == ["m.a", "m.b"]


def test_each_item_is_a_slot_worth_its_points(bank_path: Path) -> None:
    book = compile_bank(load_bank(bank_path))
    slots = book.slots_of("shapes")
    assert [(s.id, s.points) for s in slots] == [
        ("shapes.binom", 2.0),
        ("shapes.pois", 1.0),
        ("shapes.geom", 2.0),
    ]
    assert slots[0].prompt == "Binomial"
    assert slots[0].options == [
        "successes in n independent trials",
        "events in a fixed interval",
        "trials until the first success",
        "the spread of a sample mean",
    ]


def test_one_answer_is_read_by_letter_number_or_text_in_the_students_order(
    bank_path: Path,
) -> None:
    book = compile_bank(load_bank(bank_path))
    question = book.bank.question("shapes")
    variant = book.variant(question, student="s1", seed=3)
    order = list(variant.order)
    right = order.index(0)  # the binomial's answer is the first in the bank
    letter, number = "ABCD"[right], str(right + 1)
    for typed in (letter, letter.lower(), number, "Successes in  n independent trials"):
        verdict = grade_response(book, question, typed, part="binom", variant=variant)
        assert (verdict.status, verdict.score, verdict.question) == (
            Status.CORRECT,
            2.0,
            "shapes.binom",
        )
    wrong = "ABCD"[order.index(1)]
    verdict = grade_response(book, question, wrong, part="binom", variant=variant)
    assert verdict.status is Status.INCORRECT
    assert verdict.tag == "binomial-vs-poisson"
    assert verdict.feedback.startswith("The binomial counts")
    assert grade_response(book, question, "E", part="binom", variant=variant).status is (
        Status.INVALID
    )
    with pytest.raises(KeyError, match="no item 'nope'"):
        grade_response(book, question, "A", part="nope")


def _typed(rng: random.Random, answers: list[str], order: list[int], right: int) -> str:
    """How a student might answer one item: a letter, a number, the text (sometimes misspelt
    or cased oddly), nothing, or something unreadable."""
    pick = right if rng.random() < 0.6 else rng.randrange(len(answers))
    shown = order.index(pick)
    style = rng.choice(["letter", "lower", "number", "text", "misspelt", "blank", "junk"])
    if style == "letter":
        return "ABCD"[shown]
    if style == "lower":
        return f" {'abcd'[shown]}."
    if style == "number":
        return str(shown + 1)
    if style == "text":
        return answers[pick].upper()
    if style == "misspelt":
        return answers[pick][:-1] + "x"
    return "" if style == "blank" else "A and B"


def test_a_class_is_graded_as_each_answer_alone_and_as_an_independent_count(
    bank_path: Path, tmp_path: Path
) -> None:
    bank = load_bank(bank_path)
    book = compile_bank(bank)
    question = bank.question("shapes")
    assert isinstance(question, Matching)
    answers = question.answers
    rng = random.Random(28)
    rows, expected = [], {}
    for n in range(200):
        student = f"s{n:03d}"
        order = list(book.variant(question, student=student, seed=5).order)
        row = {"student": student}
        for pair in question.pairs:
            text = _typed(rng, answers, order, answers.index(pair.answer))
            row[f"shapes.{pair.id}"] = text
            folded = " ".join(text.split()).strip(" .").casefold()
            if not folded:
                status = "blank"
            elif folded in {a.casefold() for a in answers}:
                status = "correct" if folded == pair.answer.casefold() else "incorrect"
            elif len(folded) == 1 and folded in "abcd":
                status = (
                    "correct"
                    if order["abcd".index(folded)] == answers.index(pair.answer)
                    else "incorrect"
                )
            elif folded in "1234" and len(folded) == 1:
                status = (
                    "correct"
                    if order[int(folded) - 1] == answers.index(pair.answer)
                    else "incorrect"
                )
            else:
                status = "invalid"
            expected[(student, f"shapes.{pair.id}")] = status
        rows.append(row)
    path = tmp_path / "class.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    out = tmp_path / "out"
    grade_submissions(book, [path], out_dir=out, seed=5)
    with (out / "responses.csv").open(encoding="utf-8") as handle:
        graded = [r for r in csv.DictReader(handle) if r["question"].startswith("shapes.")]
    assert len(graded) == 600
    for r in graded:
        assert r["verdict"] == expected[(r["student"], r["question"])], r
        single = grade_response(
            book,
            question,
            r["answer"],
            part=r["question"].split(".")[1],
            student=r["student"],
            seed=5,
        )
        assert (single.status.value, single.score) == (r["verdict"], float(r["score"])), r
    with (out / "items.csv").open(encoding="utf-8") as handle:
        items = {r["question"]: r for r in csv.DictReader(handle)}
    assert items["shapes.binom"]["type"] == "matching"
    assert items["shapes.pois"]["random_guess"] == "25"


def test_worksheet_and_key_show_items_and_answers_in_the_students_order(
    bank_path: Path,
) -> None:
    from quizgym.render.roster import Student

    book = compile_bank(load_bank(bank_path))
    question = book.bank.question("shapes")
    student = Student(id="s1")
    order = book.variant(question, student="s1", seed=2).order
    sheet = render_worksheet(book, [question], fmt="md", student=student, seed=2)
    answers = pairing_of(question).answers  # type: ignore[union-attr]
    shown = [line.split("** ", 1)[1] for line in sheet.splitlines() if line.startswith("- **")]
    assert shown == [answers[i] for i in order]
    assert "1. `   ` Binomial" in sheet
    key = render_key(book, [question], fmt="md", students=[student], seed=2)
    letter = "ABCD"[list(order).index(0)]
    assert f"**1.** Binomial: **{letter}: successes in n independent trials**" in key


def test_moodle_writes_a_match_question_its_importer_reads(bank_path: Path) -> None:
    bank = load_bank(bank_path)
    root = etree.fromstring(exporter("moodle", bank).to_bytes())
    (shapes,) = [q for q in root.iter("question") if q.findtext("name/text") == "shapes"]
    assert shapes.get("type") == "matching"
    assert shapes.findtext("shuffleanswers") == "true"
    pairs = [
        (strip_tags(s.findtext("text") or ""), s.findtext("answer/text"))
        for s in shapes.iter("subquestion")
    ]
    question = bank.question("shapes")
    assert isinstance(question, Matching)
    assert pairs == [(p.item, p.answer) for p in question.pairs] + [
        ("", "the spread of a sample mean")
    ]
    assert shapes.findtext("defaultgrade") == "5"


def test_moodle_says_it_weighs_items_alike(bank_path: Path) -> None:
    export = exporter("moodle", load_bank(bank_path))
    export.to_bytes()
    assert export.warnings == [
        "warning: shapes: Moodle weighs every item of a matching question alike; quizgym "
        "gives them 1, 2 points"
    ]


def test_gift_writes_pairs_gift_pegjs_reads_and_refuses_distractors(
    bank_path: Path, tmp_path: Path
) -> None:
    bank = load_bank(bank_path)
    with pytest.raises(ExportError, match="shapes: a matching question with distractors"):
        exporter("gift", bank).to_bytes()
    path = tmp_path / "fixed.yaml"
    fixed_only = (
        STATS.split("  - id: shapes")[0] + "  - id: fixed" + STATS.split("  - id: fixed")[1]
    )
    path.write_text(fixed_only, encoding="utf-8")
    out = tmp_path / "fixed.gift"
    out.write_bytes(exporter("gift", load_bank(path)).to_bytes())
    (parsed,) = [q for q in parse_gift(out) if q["type"] == "Matching"]
    pairs = [(p["subquestion"]["text"], p["subanswer"]) for p in parsed["matchPairs"]]  # type: ignore[index, call-overload, union-attr]
    assert pairs == [
        ("t test", "a mean"),
        ("chi-squared test", "counts in categories"),
        ("F test", "two variances"),
    ]


def test_canvas_qti12_is_valid_and_scores_every_probe_as_quizgym_does(bank_path: Path) -> None:
    import io
    import itertools
    import zipfile

    from export_checkers import qti12_dtd, strip_namespaces

    bank = load_bank(bank_path)
    book = compile_bank(bank)
    package = zipfile.ZipFile(io.BytesIO(exporter("qti12", book).to_bytes()))
    (name,) = [n for n in package.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n]
    data = package.read(name)
    dtd = qti12_dtd()
    assert dtd.validate(strip_namespaces(etree.fromstring(data))), dtd.error_log  # type: ignore[attr-defined]
    root = strip_namespaces(etree.fromstring(data))
    (item,) = root.xpath("//item[@ident='fixed']")
    fields = dict(
        zip(item.xpath(".//fieldlabel/text()"), item.xpath(".//fieldentry/text()"), strict=True)
    )
    assert fields["question_type"] == "matching_question"
    labels = {
        lid.get("ident"): {
            strip_tags(etree.tostring(rl.find("material/mattext"), encoding="unicode")): rl.get(
                "ident"
            )
            for rl in lid.iter("response_label")
        }
        for lid in item.iter("response_lid")
    }
    question = bank.question("fixed")
    assert isinstance(question, Matching)
    answers = question.answers
    # Canvas's score: the SCORE each respcondition whose varequal holds adds, out of 100; so
    # that a QTI 1.2 reader other than Canvas adds them too, none stops the processing.
    scoring = [c for c in item.iter("respcondition") if c.find("setvar") is not None]
    assert scoring and {c.get("continue") for c in scoring} == {"Yes"}
    for picks in itertools.product(range(len(answers)), repeat=len(question.pairs)):
        given = {
            f"response_{p.id}": labels[f"response_{p.id}"][answers[k]]
            for p, k in zip(question.pairs, picks, strict=True)
        }
        canvas = sum(
            float(c.findtext("setvar"))
            for c in item.iter("respcondition")
            if (v := c.find("conditionvar/varequal")) is not None
            and given[v.get("respident")] == v.text
        )
        ours = sum(
            grade_response(book, question, answers[k], part=p.id).score
            for p, k in zip(question.pairs, picks, strict=True)
        )
        assert canvas / 100 * 6 == pytest.approx(ours)


def test_qti21_is_valid_and_its_mapping_scores_every_probe_as_quizgym_does(bank_path: Path) -> None:
    import io
    import itertools
    import zipfile

    from export_checkers import qti21_schema

    bank = load_bank(bank_path)
    book = compile_bank(bank)
    package = zipfile.ZipFile(io.BytesIO(exporter("qti21", book).to_bytes()))
    (name,) = [n for n in package.namelist() if n.endswith("shapes.xml")]
    doc = etree.fromstring(package.read(name))
    schema = qti21_schema()
    assert schema.validate(doc), schema.error_log  # type: ignore[attr-defined]
    ns = {"q": "http://www.imsglobal.org/xsd/imsqti_v2p1"}
    (mapping,) = doc.xpath("//q:responseDeclaration/q:mapping", namespaces=ns)
    mapped = {e.get("mapKey"): float(e.get("mappedValue")) for e in mapping}
    sets = doc.xpath("//q:matchInteraction/q:simpleMatchSet", namespaces=ns)
    items = [c.get("identifier") for c in sets[0]]
    answer_ids = {"".join(c.itertext()): c.get("identifier") for c in sets[1]}
    question = bank.question("shapes")
    assert isinstance(question, Matching)
    answers = question.answers
    # mapResponse: the mapped values of the distinct pairs given, within the mapping's bounds.
    for picks in itertools.product(range(len(answers)), repeat=len(items)):
        given = {f"{i} {answer_ids[answers[k]]}" for i, k in zip(items, picks, strict=True)}
        score = sum(mapped.get(pair, float(mapping.get("defaultValue"))) for pair in given)
        score = min(max(score, float(mapping.get("lowerBound"))), float(mapping.get("upperBound")))
        ours = sum(
            grade_response(book, question, answers[k], part=p.id).score
            for p, k in zip(question.pairs, picks, strict=True)
        )
        assert score == pytest.approx(ours)


def test_blackboard_writes_mat_rows_and_refuses_distractors(
    bank_path: Path, tmp_path: Path
) -> None:
    with pytest.raises(ExportError, match="shapes: a matching question with distractors"):
        exporter("blackboard", load_bank(bank_path)).to_bytes()
    path = tmp_path / "fixed.yaml"
    path.write_text(
        STATS.split("  - id: shapes")[0] + "  - id: fixed" + STATS.split("  - id: fixed")[1]
    )
    (row,) = exporter("blackboard", load_bank(path)).to_bytes().decode().splitlines()
    assert row.split("\t") == [
        "MAT", "Pair each test with its statistic.", "t test", "a mean", "chi-squared test",
        "counts in categories", "F test", "two variances",
    ]  # fmt: skip


@pytest.mark.slow
def test_anki_imports_a_card_whose_back_pairs_each_item(bank_path: Path, tmp_path: Path) -> None:
    from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest

    path = exporter("anki", load_bank(bank_path)).save(tmp_path / "stats.apkg")
    collection = Collection(str(tmp_path / "collection.anki2"))
    try:
        request = ImportAnkiPackageRequest(
            package_path=str(path), options=ImportAnkiPackageOptions(with_scheduling=False)
        )
        collection.import_anki_package(request)
        notes = [collection.get_note(n) for n in collection.find_notes("")]
        (note,) = [n for n in notes if n["QID"] == "fixed"]
        assert strip_tags(note["Answer"]).splitlines() == [
            "1. A: a mean",
            "2. B: counts in categories",
            "3. C: two variances",
        ]
        assert "chi-squared test" in strip_tags(note["Question"])
    finally:
        collection.close()


def test_a_matching_item_is_a_one_answer_choice(bank_path: Path) -> None:
    question = load_bank(bank_path).question("fixed")
    assert choices_of(question) is None
    item = choices_of(question, "chi")
    assert item is not None and not item.multiple
    assert [c.correct for c in item.choices] == [False, True, False]


def test_export_prints_what_the_format_scores_unlike_quizgym(bank_path: Path) -> None:
    from click.testing import CliRunner

    from quizgym.cli import cli

    for check in ([], ["--check"]):
        run = CliRunner().invoke(
            cli,
            [
                "export",
                str(bank_path),
                "--to",
                "moodle",
                "-o",
                str(bank_path.with_suffix(".xml")),
                *check,
            ],
        )
        assert run.exit_code == 0, run.output
        assert run.output.splitlines()[-1] == (
            "warning: shapes: Moodle weighs every item of a matching question alike; quizgym "
            "gives them 1, 2 points"
        )


def test_a_class_given_one_order_of_the_answers_is_warned_of_on_each_item(
    bank_path: Path, tmp_path: Path
) -> None:
    # Every student answered with letters off one photocopied sheet (the default order), but the
    # run grades each against the order drawn for them: the letters fit the default version.
    book = compile_bank(load_bank(bank_path))
    question = book.bank.question("shapes")
    assert isinstance(question, Matching)
    answers = question.answers
    shown = list(book.variant(question).order)
    rows = ["student," + ",".join(f"shapes.{p.id}" for p in question.pairs)]
    for n in range(40):
        letters = ["ABCD"[shown.index(answers.index(p.answer))] for p in question.pairs]
        rows.append(f"s{n:02d}," + ",".join(letters))
    path = tmp_path / "class.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    run = grade_submissions(book, [path], out_dir=tmp_path / "out", seed=9)
    fits = [w for w in run.warnings if "the default version's key" in w]
    assert sorted(w.split(":")[0] for w in fits) == ["shapes.binom", "shapes.geom", "shapes.pois"]
    # Answered with the answers' texts, the same class fits every order alike: no warning.
    texts = [rows[0]] + [
        f"s{n:02d}," + ",".join(p.answer for p in question.pairs) for n in range(40)
    ]
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    assert grade_submissions(book, [path], out_dir=tmp_path / "out2", seed=9).warnings == []


def test_the_web_form_asks_each_item_as_a_choice_of_the_answers(bank_path: Path) -> None:
    pytest.importorskip("starlette")
    from quizgym.serve.forms import FormError, draw_question, read_answers

    book = compile_bank(load_bank(bank_path))
    question = book.bank.question("shapes")
    variant = book.variant(question, student="s1", seed=4)
    order = list(variant.order)
    html = draw_question(book, question, variant, heading="Question 1")
    assert html.count("<fieldset>") == 3
    assert "<legend>Binomial</legend>" in html
    answers = pairing_of(question).answers  # type: ignore[union-attr]
    first = html.index("<legend>Binomial</legend>")
    labels = [
        html[html.index(f'value="{letter}"', first) :].split("</label>")[0].rsplit(". ", 1)[1]
        for letter in "ABCD"
    ]
    assert labels == [answers[i] for i in order]
    right = "ABCD"[order.index(0)]
    read = read_answers(book, [question], [("shapes.binom", right), ("_csrf", "x")])
    assert read == {"shapes.binom": right, "shapes.pois": None, "shapes.geom": None}
    verdict = grade_response(book, question, right, part="binom", variant=variant)
    assert verdict.status is Status.CORRECT
    with pytest.raises(FormError, match="sent 2 times"):
        read_answers(book, [question], [("shapes.binom", "A"), ("shapes.binom", "B")])


def test_an_answer_whose_text_reads_like_no_answer_is_an_answer(tmp_path: Path) -> None:
    # "Na" (sodium) is also how "n/a" is typed: as the text of one of the answers it is one.
    path = tmp_path / "chem.yaml"
    path.write_text(
        "bank: chem\ntitle: Chem\nquestions:\n  - id: sym\n    type: matching\n"
        "    prompt: Pair each element with its symbol.\n    pairs:\n"
        "      - {id: na, item: Sodium, answer: Na}\n      - {id: k, item: Potassium, answer: K}\n",
        encoding="utf-8",
    )
    book = compile_bank(load_bank(path))
    question = book.bank.question("sym")
    for part, status in (("na", Status.CORRECT), ("k", Status.INCORRECT)):
        assert grade_response(book, question, "Na", part=part).status is status


@pytest.mark.parametrize(
    ("typed", "split"),
    [
        ("1C 2A", {"t": "C", "chi": "A"}),
        ("1-c, 3-b.", {"t": "c", "f": "b"}),
        ("B-1, A-3", {"t": "B", "f": "A"}),
        ("1) A; 2) C", {"t": "A", "chi": "C"}),
        ("t test: a mean; F TEST -> two variances", {"t": "a mean", "f": "two variances"}),
        (
            "chi: counts in categories, f = two variances",
            {"chi": "counts in categories", "f": "two variances"},
        ),
        ("1A 1B", None),  # an item named twice
        ("4A", None),  # no fourth item
        ("a mean, two variances", None),  # answers without their items
        ("", None),
    ],
)
def test_a_whole_question_typed_in_one_text_is_split_into_its_items(
    bank_path: Path, typed: str, split: dict[str, str] | None
) -> None:
    pairing = pairing_of(load_bank(bank_path).question("fixed"))
    assert pairing is not None
    assert pairing.split(typed) == split


def test_a_whole_cell_that_names_no_item_is_unreadable_on_every_item(
    bank_path: Path, tmp_path: Path
) -> None:
    # "a mean" is the t test's answer, but the cell names no item: never placed by luck.
    book = compile_bank(load_bank(bank_path))
    path = tmp_path / "class.csv"
    path.write_text('student,fixed\ns1,a mean\ns2,"t test: a mean; F test: two variances"\n')
    out = tmp_path / "out"
    grade_submissions(book, [path], out_dir=out, seed=5)
    with (out / "responses.csv").open(encoding="utf-8") as handle:
        graded = {
            (r["student"], r["question"]): r["verdict"]
            for r in csv.DictReader(handle)
            if r["question"].startswith("fixed.")
        }
    assert {v for (s, _), v in graded.items() if s == "s1"} == {"invalid"}
    assert graded[("s2", "fixed.t")] == graded[("s2", "fixed.f")] == "correct"
    assert graded[("s2", "fixed.chi")] == "blank"
