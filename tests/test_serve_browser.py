"""``quizgym serve`` in a real browser (Debian's chromium driven by Playwright) at a phone's
and a desktop's size: sign in by link, practise and take a quiz with the keyboard only, every
page free of WCAG 2.2 AA violations by axe-core, screenshots kept in the test's folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM_ARGS, require_tool
from serve_helpers import ROOT, Client, Server, links, write_class

pytest.importorskip("uvicorn")
playwright_api = pytest.importorskip("playwright.sync_api")

AXE = ROOT / "tests" / "js" / "node_modules" / "axe-core" / "axe.min.js"
SIZES = {"phone": (390, 844), "desktop": (1280, 800)}
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    folder = tmp_path_factory.mktemp("browser")
    bank, roster = write_class(folder)
    data = folder / "data"
    with Server(str(bank), "--roster", str(roster), "--data", str(data), "--quiz-ids",
                "mc-pick,num-parts,tf-plain", "--attempts", "2", "--feedback", "submitted",
                "--rate", "1000") as running:  # fmt: skip
        yield running, data


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = require_tool("chromium")
    if not AXE.is_file():
        pytest.skip("axe-core is not installed (make test runs npm ci in tests/js)")
    with playwright_api.sync_playwright() as manager:
        launched = manager.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def open_page(browser: Any, size: str) -> Any:
    width, height = SIZES[size]
    # bypass_csp: axe is injected as a script of the test's own; the pages carry none.
    context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
    return context.new_page()


def accessible(page: Any, what: str) -> None:
    """No WCAG 2.2 AA violation on the page, and nothing wider than the screen."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        "async (tags) => (await axe.run(document, {runOnly: {type: 'tag', values: tags}}))"
        ".violations.map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', '))",
        WCAG,
    )
    assert found == [], what
    wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 0, f"{what}: {wide} px wider than the screen"


def tab_to(page: Any, selector: str, *, limit: int = 80) -> None:
    """Press Tab until the element ``selector`` has the focus (it is reachable by keyboard)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"{selector} cannot be reached with Tab")


@pytest.mark.parametrize("size", list(SIZES))
def test_sign_in_and_practise_with_the_keyboard(
    server: tuple[Server, Path], browser: Any, size: str, tmp_path: Path
) -> None:
    running, data = server
    student = {"phone": "ann", "desktop": "bob"}[size]
    page = open_page(browser, size)
    page.goto(links(data)[student])
    assert page.url == f"{running.url}/"
    accessible(page, "home")
    tab_to(page, 'main a[href="/practice"]')
    page.keyboard.press("Enter")
    page.wait_for_url("**/practice")
    accessible(page, "practice question")
    page.screenshot(path=tmp_path / f"practice-{size}.png", full_page=True)
    tab_to(page, "input[name='mc-pick']")
    page.keyboard.press("Space")  # the first choice
    tab_to(page, "button[type=submit]")
    page.keyboard.press("Enter")
    page.wait_for_url("**/practice/done/*")
    marked = page.locator("[data-slot='mc-pick']")
    assert marked.get_attribute("data-verdict") in {"correct", "incorrect"}
    assert marked.is_visible()
    accessible(page, "practice verdict")
    page.screenshot(path=tmp_path / f"practice-verdict-{size}.png", full_page=True)
    tab_to(page, "a[href='/practice']:not(nav a)")
    page.keyboard.press("Enter")
    page.wait_for_url("**/practice")
    assert page.locator("input[name='mc-several']").count() == 3
    page.context.close()
    assert (tmp_path / f"practice-{size}.png").stat().st_size > 1000


@pytest.mark.parametrize("size", list(SIZES))
def test_take_a_quiz_with_the_keyboard_and_see_feedback_after_finishing(
    server: tuple[Server, Path], browser: Any, size: str, tmp_path: Path
) -> None:
    _, data = server
    student = {"phone": "cy", "desktop": "ann"}[size]
    page = open_page(browser, size)
    page.goto(links(data)[student])
    page.goto(page.url + "quiz")
    accessible(page, "quiz")
    assert page.locator("math").count() >= 1  # the formula is MathML
    tab_to(page, "input[name='mc-pick']")
    page.keyboard.press("Space")
    tab_to(page, "input[name='num-parts.selected']")
    page.keyboard.type("6")
    page.keyboard.press("Tab")
    page.keyboard.type("4.8")
    tab_to(page, "input[name='tf-plain'][value='true']")
    page.keyboard.press("Space")
    tab_to(page, "button[type=submit]:not([name])")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "Attempts: 1 used, 1 left." in page.content()
    assert page.locator("[data-verdict]").count() == 0  # policy: after finishing
    assert "The verdicts are shown once you submit and finish." in page.content()
    accessible(page, "quiz saved")
    tab_to(page, "button[name='_finish']")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    marks = {
        el.get_attribute("data-slot"): el.get_attribute("data-verdict")
        for el in page.locator("[data-slot]").all()
    }
    assert set(marks) == {"mc-pick", "num-parts.selected", "num-parts.masked", "tf-plain"}
    assert marks["tf-plain"] == "correct"
    assert "You have finished the quiz." in page.content()
    accessible(page, "quiz results")
    page.screenshot(path=tmp_path / f"quiz-results-{size}.png", full_page=True)
    page.context.close()


def test_the_teacher_and_refusal_pages_are_accessible(
    server: tuple[Server, Path], browser: Any
) -> None:
    running, _ = server
    for size in SIZES:
        page = open_page(browser, size)
        page.goto(running.teacher)
        assert page.url.endswith("/teacher")
        accessible(page, f"teacher {size}")
        page.goto(f"{running.url}/in/forged")
        assert "This sign-in link cannot be used" in page.content()
        accessible(page, f"refusal {size}")
        page.context.close()


def test_the_teacher_reviews_an_answer_with_the_keyboard(
    tmp_path_factory: pytest.TempPathFactory, browser: Any, tmp_path: Path
) -> None:
    folder = tmp_path_factory.mktemp("browser-teacher")
    bank, roster = write_class(folder)
    data = folder / "data"
    with Server(str(bank), "--roster", str(roster), "--data", str(data), "--quiz-ids",
                "num-loss,mc-pick,ft-why", "--rate", "1000") as running:  # fmt: skip
        for who, why in (("ann", "it keeps context"), ("bob", "it keeps context"), ("cy", "speed")):
            client = Client(running)
            client.sign_in(links(data)[who])
            page = client.get("/quiz")
            assert (
                client.submit(page, {"num-loss": "1", "mc-pick": "A", "ft-why": why}).status == 303
            )
        for size in SIZES:
            page = open_page(browser, size)
            page.goto(running.teacher)
            accessible(page, f"teacher {size}")
            tab_to(page, "main a[href='/teacher/items']")
            page.keyboard.press("Enter")
            page.wait_for_url("**/teacher/items")
            assert "Cronbach" in page.content()
            accessible(page, f"item analysis {size}")
            page.screenshot(path=tmp_path / f"teacher-items-{size}.png", full_page=True)
            page.goto(f"{running.url}/teacher/review")
            accessible(page, f"review queue {size}")
            page.screenshot(path=tmp_path / f"teacher-review-{size}.png", full_page=True)
            page.context.close()
        page = open_page(browser, "phone")
        page.goto(running.teacher)
        page.goto(f"{running.url}/teacher/review")
        heading = page.locator("h2", has_text="it keeps context")
        form = page.locator("form", has=heading)
        score = form.locator("input[name='score']")
        tab_to(page, f"#{score.get_attribute('id')}")
        page.keyboard.type("0.5")
        page.keyboard.press("Tab")
        page.keyboard.type("Fair enough.")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Save the decision"
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.url.endswith("/teacher/review?page=1")
        assert form.locator("input[name='score']").input_value() == "0.5"
        accessible(page, "review queue, decided")
        page.context.close()


CHEM = """
bank: chem-web
title: Chemistry
questions:
  - id: water
    type: cloze
    prompt: >-
      The molar mass of water is {{mass}}; its bonds are {{bond}}, and the gas given off at the
      cathode is {{gas}}.
    blanks:
      mass: {answer: 2*1.008 + 15.999, units: g/mol, tolerance: {rel: 0.01}}
      bond: {choices: [ionic, polar covalent, metallic], answer: polar covalent}
      gas: {accept: [hydrogen, H2]}
  - id: symbols
    type: matching
    prompt: Pair each element with its symbol.
    pairs:
      - {id: na, item: Sodium, answer: Na}
      - {id: k, item: Potassium, answer: K}
    distractors: [S]
"""


def choose(page: Any, name: str, text: str) -> None:
    """Tab into the radio group ``name`` and move with the arrow keys, as a keyboard user does,
    to the option whose label ends with ``text`` (the order is the student's own)."""
    value = page.evaluate(
        "([name, text]) => [...document.querySelectorAll(`input[name='${name}']`)]"
        ".find(i => document.querySelector(`label[for='${i.id}']`).textContent.trim()"
        ".endsWith(text)).value",
        [name, text],
    )
    target = f"input[name='{name}'][value='{value}']"
    tab_to(page, f"input[name='{name}']")
    page.keyboard.press("Space")  # the first option, when the group has none chosen yet
    for _ in range(8):
        if page.evaluate("(s) => document.activeElement.matches(s)", target):
            assert page.locator(target).is_checked()
            return
        page.keyboard.press("ArrowDown")
    raise AssertionError(f"{target} cannot be reached with the arrow keys")


def test_a_cloze_and_a_matching_question_on_a_phone_with_the_keyboard(
    browser: Any, tmp_path: Path
) -> None:
    bank = tmp_path / "chem.yaml"
    bank.write_text(CHEM, encoding="utf-8")
    roster = tmp_path / "roster.csv"
    roster.write_text("student,name\nann,Ann\n", encoding="utf-8")
    data = tmp_path / "data"
    with Server(str(bank), "--roster", str(roster), "--data", str(data), "--quiz-ids",
                "water,symbols", "--feedback", "now", "--rate", "1000"):  # fmt: skip
        page = open_page(browser, "phone")
        page.goto(links(data)["ann"])
        page.goto(page.url + "quiz")
        assert "{{" not in page.content()
        accessible(page, "cloze and matching quiz")
        page.screenshot(path=tmp_path / "cloze-phone.png", full_page=True)
        tab_to(page, "input[name='water.mass']")
        page.keyboard.type("18.0 g/mol")
        choose(page, "water.bond", "polar covalent")
        tab_to(page, "input[name='water.gas']")
        page.keyboard.type("H2")
        choose(page, "symbols.na", "Na")
        choose(page, "symbols.k", "S")
        tab_to(page, "button[type=submit]:not([name])")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        marks = {
            el.get_attribute("data-slot"): el.get_attribute("data-verdict")
            for el in page.locator("[data-slot]").all()
        }
        assert marks == {
            "water.mass": "correct",
            "water.bond": "correct",
            "water.gas": "correct",
            "symbols.na": "correct",
            "symbols.k": "incorrect",
        }
        accessible(page, "cloze and matching verdicts")
        page.screenshot(path=tmp_path / "cloze-verdict-phone.png", full_page=True)
        page.context.close()
