"""The ``itemsampling`` command line as a whole: help texts of every command."""

from __future__ import annotations

import re

import pytest

from itemsampling.cli import main
from itemsampling.commands._common import plain_text

#: every command and sub-command, as the arguments before ``--help``
COMMANDS = [[], ["estimate"], ["data"], ["data", "stats"], ["data", "verify"], ["train"], ["ranks"],
            ["evaluate-adaptive"]]


def _help(argv: list[str], capsys) -> str:
    """The ``--help`` text of a command, with runs of white space joined (argparse wraps lines)."""
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    ("command", "option"),
    [(["estimate"], "--output FILE"), (["data", "stats"], "--output FILE"), (["train"], "--out-dir DIR"),
     (["ranks"], "--output FILE"), (["evaluate-adaptive"], "--output FILE"),
     (["evaluate-adaptive"], "--ranks-output FILE")],
)
def test_help_says_that_existing_outputs_are_overwritten(command, option, capsys):
    text = _help(command, capsys)
    described = text[text.rindex(option):]
    assert "must exist" in described and "overwritten" in described


@pytest.mark.parametrize("command", COMMANDS, ids=lambda argv: " ".join(argv) or "itemsampling")
def test_help_is_plain_text(command, capsys):
    text = _help(command, capsys)
    assert "``" not in text and ":func:" not in text
    assert not re.search(r":[a-z]+:`", text), "a reStructuredText role is shown as is"


def test_plain_text_keeps_the_words_and_drops_the_markup():
    doc = "Run ``itemsampling\ntrain`` (see :func:`itemsampling.estimate` and :mod:`~itemsampling.ranks`)."
    assert plain_text(doc) == "Run itemsampling\ntrain (see itemsampling.estimate and itemsampling.ranks)."
