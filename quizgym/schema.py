"""The JSON Schema of the bank format, for editors (``# yaml-language-server: $schema=...``)."""

from __future__ import annotations

import json

from quizgym.model import Bank

SCHEMA_ID = "urn:quizgym:bank-schema:1"


def bank_json_schema(*, indent: int = 2) -> str:
    """Return the JSON Schema of a bank file as text."""
    schema = Bank.model_json_schema(mode="validation")
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
    }
    return json.dumps(schema, indent=indent, ensure_ascii=False)
