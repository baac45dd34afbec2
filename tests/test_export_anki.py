"""Anki packages imported by the official ``anki`` package into a throw-away collection."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pytest
from export_checkers import SPECIAL, plain, said, strip_tags

from quizgym.export import exporter
from quizgym.export.anki import AnkiExporter
from quizgym.loader import load_bank, parse_bank
from quizgym.model import Bank, MultipleChoice, Numeric, TrueFalse
from quizgym.solver import keys_of, variant_of

pytestmark = pytest.mark.slow


def _import(collection: Any, path: Path) -> Any:
    from anki.collection import ImportAnkiPackageOptions, ImportAnkiPackageRequest

    request = ImportAnkiPackageRequest(
        package_path=str(path), options=ImportAnkiPackageOptions(with_scheduling=False)
    )
    return collection.import_anki_package(request)


@pytest.fixture
def collection(tmp_path: Path) -> Any:
    from anki.collection import Collection

    col = Collection(str(tmp_path / "collection.anki2"))
    yield col
    col.close()


def _notes(collection: Any) -> dict[str, Any]:
    notes = [collection.get_note(nid) for nid in collection.find_notes("")]
    return {note["QID"]: note for note in notes}


def test_import_matches_bank(collection: Any, tmp_path: Path) -> None:
    bank = load_bank("bert-mlm")
    path = exporter("anki", bank).save(tmp_path / "bert.apkg")
    log = _import(collection, path).log
    assert len(log.new) == len(bank.questions)
    notes = _notes(collection)
    assert sorted(notes) == sorted(q.id for q in bank.questions)
    deck = collection.decks.by_name("quizgym::bert-mlm")
    assert deck is not None
    for question in bank.questions:
        note = notes[question.id]
        assert sorted(note.tags) == sorted([*question.tags, question.type])
        front, back = strip_tags(note["Question"]), strip_tags(note["Answer"])
        if question.explanation:
            assert plain(strip_tags(note["Explanation"])) == said(question.explanation)
        if isinstance(question, TrueFalse):
            assert back == ("True" if question.answer else "False")
        elif isinstance(question, MultipleChoice):
            right = [c.text for c in question.choices if c.correct]
            assert all(plain(t) in plain(back) for t in right)
            assert all(said(c.text) in plain(front) for c in question.choices)
        elif isinstance(question, Numeric):
            keys = keys_of(bank, question, variant_of(bank, question))
            assert all(str(key) in back for key in keys), (back, [str(k) for k in keys])


def test_reexport_updates_and_never_duplicates(collection: Any, tmp_path: Path) -> None:
    source = SPECIAL.read_text(encoding="utf-8")
    first = AnkiExporter(parse_bank(source, path="b.yaml"), timestamp=1_700_000_000)
    path = first.save(tmp_path / "one.apkg")
    assert len(_import(collection, path).log.new) == 9
    edited = source.replace("Weights look like %n%", "Weights look like %n% (edited)")
    second = AnkiExporter(parse_bank(edited, path="b.yaml"), timestamp=1_700_000_100)
    log = _import(collection, second.save(tmp_path / "two.apkg")).log
    # every note carries the newer timestamp, so Anki refreshes all nine in place
    assert (len(log.new), len(log.updated)) == (0, 9)
    notes = _notes(collection)
    assert len(notes) == 9
    assert "(edited)" in html.unescape(notes["mc-specials"]["Explanation"])
    # and the same export again changes nothing
    log = _import(collection, second.save(tmp_path / "three.apkg")).log
    assert (len(log.new), len(log.updated)) == (0, 0)


def test_variants_are_separate_notes_and_special_characters_survive(
    collection: Any, tmp_path: Path
) -> None:
    bank: Bank = load_bank(SPECIAL)
    path = exporter("anki", bank, variants=3, seed=5).save(tmp_path / "v.apkg")
    _import(collection, path)
    notes = _notes(collection)
    assert any(qid.startswith("num-specials.seed") for qid in notes)
    tf = notes["tf-specials"]
    assert plain(strip_tags(tf["Question"])) == said("True or false? " + bank.questions[0].prompt)


def test_package_is_deterministic() -> None:
    bank = load_bank(SPECIAL)
    assert exporter("anki", bank).to_bytes() == exporter("anki", bank).to_bytes()
