"""The ``itemsampling`` command line as a whole: help texts of every command."""

from __future__ import annotations

import pytest

from itemsampling.cli import main


def _help(argv: list[str], capsys) -> str:
    """The ``--help`` text of a command, with runs of white space joined (argparse wraps lines)."""
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    ("command", "option"),
    [(["estimate"], "--output FILE"), (["data", "stats"], "--output FILE"), (["train"], "--out-dir DIR"),
     (["ranks"], "--output FILE")],
)
def test_help_says_that_existing_outputs_are_overwritten(command, option, capsys):
    text = _help(command, capsys)
    described = text[text.rindex(option):]
    assert "must exist" in described and "overwritten" in described
