"""Every shipped scenario validates against scenarios/scenario.schema.json, and the
schema rejects what the C++ loader rejects (docs/scenario-format.md)."""
import json
import pathlib

import jsonschema
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "scenarios" / "scenario.schema.json").read_text())
SHIPPED = sorted(p for p in (ROOT / "scenarios").rglob("*.json") if p.name != "scenario.schema.json")


def test_schema_is_a_valid_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_there_are_shipped_scenarios():
    assert SHIPPED


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_scenario_matches_schema(path):
    jsonschema.validate(json.loads(path.read_text()), SCHEMA)


@pytest.mark.parametrize(
    "doc",
    [
        {"program": {"nasm": "hlt"}},  # no name
        {"name": "t", "program": {"nasm": "hlt"}, "limitz": {}},  # unknown key
        {"name": "t", "program": {"nasm": "hlt", "nasm_file": "x.asm"}},  # both program forms
        {"name": "t", "program": {"nasm": "hlt"}, "start": "long65"},
        {"name": "t", "program": {"nasm": "hlt"}, "registers": {"eax": 1}},
        {"name": "t", "program": {"nasm": "hlt"}, "expect": {"memory": [{"address": 1, "size": 3, "value": 0}]}},
        {"name": "t", "program": {"nasm": "hlt"}, "msrs": {"IA32_EFER": "0xZZ"}},
    ],
)
def test_schema_rejects_bad_scenarios(doc):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)
