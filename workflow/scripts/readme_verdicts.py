"""Check or rewrite the README's section "What reproduces and what does not" from the verdict table.

The section between the markers ``<!-- verdicts:start -->`` and ``<!-- verdicts:end -->`` is
:func:`itemsampling_study.verdicts.summary_markdown` of ``results/tables/verdicts.csv`` and
``checks.csv`` (rule ``verdicts``), so the README says what the committed table says. ``make reproduce``
rewrites it after the study. Exit status 1 when it differs and --write is not given.

    python workflow/scripts/readme_verdicts.py [--write]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from itemsampling._files import atomic_text_file
from itemsampling_study.verdicts import read_checks, read_verdicts, summary_markdown

REPO = Path(__file__).resolve().parents[2]
START, END = "<!-- verdicts:start -->", "<!-- verdicts:end -->"


def with_section(readme: str, section: str) -> str:
    """``readme`` with the text between the markers replaced by ``section``."""
    if readme.count(START) != 1 or readme.count(END) != 1 or readme.index(START) > readme.index(END):
        raise ValueError(f"the README must hold one {START} before one {END}")
    head, rest = readme.split(START)
    _, tail = rest.split(END)
    return f"{head}{START}\n{section}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the section when it differs")
    parser.add_argument("--root", type=Path, default=REPO, help="the repository (default: this one)")
    args = parser.parse_args(argv)
    path = args.root / "README.md"
    current = path.read_text()
    expected = with_section(current, summary_markdown(read_verdicts(args.root), read_checks(args.root)))
    if current == expected:
        return 0
    if not args.write:
        print(f"{path.name}: the verdict section differs from results/tables/verdicts.csv; run "
              "`python workflow/scripts/readme_verdicts.py --write`", file=sys.stderr)
        return 1
    with atomic_text_file(path) as fh:
        fh.write(expected)
    print(f"rewrote the verdict section of {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
