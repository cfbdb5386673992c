"""`make check`'s verdict: does the rerun in the work tree reproduce the committed tables?

Reads the committed tables and results/provenance.json from git (REV, default HEAD) and the
rerun's from the work tree, then compares byte for byte on a machine like the one that made the
committed results and within each table's tolerance elsewhere
(itemsampling_study.reproduction). Exit status 0 when reproduced, 1 when not.

    python workflow/scripts/check_reproduction.py [--rev HEAD] [--mode auto|bytes|tolerance]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from itemsampling_study.reproduction import check_reproduction, read_tree

TABLES = "results/tables"
PROVENANCE = "results/provenance.json"


def _git(*args: str) -> bytes:
    return subprocess.run(["git", *args], check=True, capture_output=True).stdout


def committed_tables(rev: str) -> dict[str, bytes]:
    names = _git("ls-tree", "-r", "--name-only", rev, "--", TABLES).decode().split()
    return {str(Path(n).relative_to(TABLES).with_suffix("")): _git("show", f"{rev}:{n}")
            for n in names if n.endswith(".csv") and len(Path(n).relative_to(TABLES).parts) <= 2}


def committed_record(rev: str) -> dict | None:
    try:
        return json.loads(_git("show", f"{rev}:{PROVENANCE}"))
    except subprocess.CalledProcessError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="HEAD", help="the commit whose tables are the reference (default HEAD)")
    parser.add_argument("--mode", default="auto", choices=["auto", "bytes", "tolerance"])
    args = parser.parse_args(argv)
    rerun_record = json.loads(Path(PROVENANCE).read_text()) if Path(PROVENANCE).is_file() else None
    ok, report = check_reproduction(committed_tables(args.rev), read_tree(TABLES), committed_record(args.rev),
                                    rerun_record, args.mode)
    print(report)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
