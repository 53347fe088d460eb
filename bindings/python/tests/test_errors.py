"""quarry.errors has one class per row of the native error-code table, with its status and
hint, so Python code can catch exactly what the CLI and the HTTP API name."""

import builtins

import quarry
from quarry import _native, errors


def test_every_code_of_the_table_has_its_class():
    table = _native.error_codes()
    assert len(table) > 40
    for name, http_status, hint in table:
        cls = getattr(errors, name)
        assert issubclass(cls, quarry.QuarryError)
        assert (cls.code, cls.http_status, cls.hint) == (name, http_status, hint)
        assert issubclass(cls, ValueError) == (400 <= http_status < 500)
    defined = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, quarry.QuarryError)
    } - {"QuarryError", "SkillError"}
    assert defined == {name for name, _, _ in table}, (
        "regenerate python/quarry/errors.py with scripts/generate_errors.py"
    )


def test_error_for_builds_the_named_class_and_tolerates_unknown_codes():
    error = errors.error_for("ModelError", "the provider answered 500")
    assert type(error) is errors.ModelError and error.message == "the provider answered 500"
    unknown = errors.error_for("SomethingNew", "from a newer native module")
    assert type(unknown) is quarry.QuarryError and unknown.code == "SomethingNew"


def test_names_of_builtins_are_not_exported_at_the_top_level():
    assert quarry.errors.KeyError is not builtins.KeyError
    assert not hasattr(quarry, "KeyError") and not hasattr(quarry, "IndexError")
    assert "KeyError" not in errors.__all__


def test_no_error_class_hides_a_public_name():
    # `from .errors import *` comes last in quarry/__init__.py: a code named like a result type
    # (the table has `Usage`) would replace it.
    assert quarry.Usage is errors.Usage
    for name in ("Extraction", "FieldResult", "Grounding", "Match", "Parsed", "TokenUsage", "Verdict"):
        assert not hasattr(errors, name), name
