"""Write the bundled bank as a text2qti quiz: the other tool's input for ``startup.py``.

text2qti (the plain-text-to-Canvas tool a Canvas user would pick instead of quizgym) reads a
Markdown-like quiz. This writes ``benchmarks/data/bert-mlm.text2qti.txt`` from ``bert-mlm``: the
same 70 questions in the same mix (true/false and spot-the-error as multiple choice, choice
feedback, numeric answers with auto's 0.1 % band (at least 0.0001, text2qti's smallest), free
text as essays, explanations as feedback). text2qti has no multi-blank numeric question, so a
multi-part question becomes one numerical question on its last part, its prompt naming every
part.

Run: ``.venv/bin/python benchmarks/text2qti_quiz.py`` (the file is committed; rerun it only
when the bank changes).
"""

from __future__ import annotations

from pathlib import Path

from quizgym.loader import load_bank
from quizgym.model import FreeText, MultipleChoice, Numeric, SpotTheError, TrueFalse
from quizgym.solver import compile_bank

OUT = Path(__file__).parent / "data" / "bert-mlm.text2qti.txt"
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _text(text: str) -> str:
    """One paragraph: text2qti reads a blank line as the end of a question's text."""
    return " ".join(text.split())


def quiz() -> str:
    """The whole quiz, as text2qti reads it."""
    bank = load_bank("bert-mlm")
    book = compile_bank(bank)
    lines = [f"Quiz title: {bank.title}", "Quiz description: the bundled bank, for timing", ""]
    for number, question in enumerate(bank.questions, 1):
        prompt = question.statement if isinstance(question, SpotTheError) else question.prompt
        variant = book.variant(question)
        text = _text(variant.fill(prompt))
        if isinstance(question, SpotTheError):
            text += f" {_text(question.prompt)}"
        if isinstance(question, Numeric) and len(book.slots_of(question)) > 1:
            text += " " + "; ".join(
                f"({s.part}) {_text(variant.fill(s.prompt))}" for s in book.slots_of(question)
            )
        lines.append(f"{number}.  {text}")
        if question.explanation:
            lines.append(f"... {_text(variant.fill(question.explanation))}")
        if isinstance(question, TrueFalse):
            truth = question.answer
            lines.append(f"{'*' if truth else ''}a)  True")
            lines.append(f"{'' if truth else '*'}b)  False")
        elif isinstance(question, MultipleChoice | SpotTheError):
            multiple = isinstance(question, MultipleChoice) and question.multiple
            for k, choice in enumerate(question.choices):
                if multiple:
                    lines.append(f"[{'*' if choice.correct else ' '}] {_text(choice.text)}")
                else:
                    mark = "*" if choice.correct else ""
                    lines.append(f"{mark}{LETTERS[k]})  {_text(choice.text)}")
                if choice.feedback:
                    lines.append(f"... {_text(choice.feedback)}")
        elif isinstance(question, Numeric):
            slots = book.slots_of(question)
            key = book.key(slots[-1], variant).number
            lines.append(f"=   {key:.6g} +- {max(abs(key) * 1e-3, 1e-4):.3g}")
        elif isinstance(question, FreeText):
            lines.append("____")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(quiz(), encoding="utf-8")
    print(f"wrote {OUT}")
