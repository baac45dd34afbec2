"""The ``true_false`` type: a statement goes in, a choice between true and false comes out."""

from __future__ import annotations

from quizgym.model import Choice, TrueFalse
from quizgym.types.base import QuestionType
from quizgym.types.interactions import ChoiceInteraction


class TrueFalseType(QuestionType[TrueFalse]):
    """A statement to judge true or false; a student types a truth word."""

    name = "true_false"
    model = TrueFalse

    def interaction(self, question: TrueFalse) -> ChoiceInteraction:
        # model_construct: the two options are quizgym's own words, valid by construction.
        options = (
            Choice.model_construct(text="true", correct=question.answer, feedback=None, tag=None),
            Choice.model_construct(
                text="false", correct=not question.answer, feedback=None, tag=None
            ),
        )
        return ChoiceInteraction(options, boolean=True)


TYPE = TrueFalseType()
