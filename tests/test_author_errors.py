"""An author's error names its fix: a name from a bundled pack the bank does not use, and a top
level that is not a mapping, reported at the line where it starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgym.cli import cli
from quizgym.errors import BankError
from quizgym.loader import parse_bank, parse_pack

_HEAD = "bank: pack-names\ntitle: Names from a pack\n"


def _check(tmp_path: Path, text: str) -> list[str]:
    bank = tmp_path / "bank.yaml"
    bank.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(bank)])
    assert result.exit_code == 1, result.output
    return [line.removeprefix(f"{bank}:") for line in result.stderr.splitlines()]


def test_a_name_a_bundled_pack_defines_names_the_pack(tmp_path: Path) -> None:
    text = _HEAD + (
        "questions:\n"
        "  - id: loss\n"
        "    type: numeric\n"
        "    prompt: The loss of two masked tokens predicted at 0.2 and 0.5?\n"
        "    answer: mlm_loss(0.2, 0.5)\n"
        "    mistakes:\n"
        "      - {answer: nsp_loss(0.5), feedback: That is the other loss.}\n"
        "  - id: typo\n"
        "    type: numeric\n"
        "    prompt: Compute.\n"
        "    answer: ln(2) + nats\n"
    )
    assert _check(tmp_path, text) == [
        "7:5: loss: answer: `mlm_loss` is in the pack `machine-learning`: "
        "add `packs: [machine-learning]`",
        "9:10: loss: mistakes.0.answer: `nsp_loss` is in the pack `machine-learning`: "
        "add `packs: [machine-learning]`",
        "13:5: typo: answer: Unknown name 'nats'; an answer is a number or an expression of "
        "numbers, e and pi, and functions such as ln, sqrt, sin (a unit goes after the number: "
        "10 m/s).",
    ]


def test_a_bank_with_other_packs_is_told_the_whole_list(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(
        "pack: mine\ntitle: Mine\nconstants:\n  c0: 3\n", encoding="utf-8"
    )
    text = _HEAD + (
        "packs: [./mine.yaml]\n"
        "questions:\n"
        "  - id: q\n"
        "    type: numeric\n"
        "    prompt: Compute.\n"
        "    answer: c0 * uniform_loss(4)\n"
    )
    assert _check(tmp_path, text) == [
        "8:5: q: answer: `uniform_loss` is in the pack `machine-learning`: "
        "add `packs: [./mine.yaml, machine-learning]`",
    ]


@pytest.mark.parametrize(
    ("text", "where", "kind"),
    [
        ("\n- id: q\n  type: numeric\n", (2, 1), "list"),
        ("# questions only\n\n  - a\n  - b\n", (3, 3), "list"),
        ("--- \n# a title alone\nJust a title\n", (3, 1), "str"),
        ("- first\n", (1, 1), "list"),
    ],
)
def test_a_top_level_that_is_no_mapping_is_reported_where_it_starts(
    text: str, where: tuple[int, int], kind: str
) -> None:
    with pytest.raises(BankError) as caught:
        parse_bank(text, path="b.yaml")
    line, col = where
    assert [str(f) for f in caught.value.findings] == [
        f"b.yaml:{line}:{col}: the top level is a {kind}; a bank is a mapping with bank, title "
        "and questions"
    ]
    with pytest.raises(BankError) as caught:
        parse_pack(text, path="p.yaml")
    assert [str(f) for f in caught.value.findings] == [
        f"p.yaml:{line}:{col}: a pack is a mapping with pack and title"
    ]
