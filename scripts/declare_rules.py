"""Declare the ledger's rules: write each claim's rule record (the rule as the ledger prints it and the paper's record
it judges against) to results/declarations/<claim>.json (initmem.study.verdicts.preregistration.declare_rule).

Usage: python scripts/declare_rules.py [CLAIM ...]   (default: every claim whose record is missing or out of date)

Commit the records before training the runs they judge: the commit that adds a record's content is its declaration,
and the ledger's page flags every claim whose runs are older than it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from initmem.study.verdicts import preregistration
from initmem.study.verdicts.judges import RULES

ROOT = Path(__file__).resolve().parents[1]


def main(claims: list[str]) -> None:
    results = ROOT / "results"
    for claim in claims or list(RULES):
        path = preregistration.rule_path(results, claim)
        if path.is_file() and json.loads(path.read_text()) == preregistration.rule_record(claim):
            print(f"{claim}: declared as printed ({path.relative_to(ROOT)})")
            continue
        preregistration.declare_rule(results, claim)
        print(f"{claim}: wrote {path.relative_to(ROOT)}; commit it to declare the rule")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("claims", nargs="*", metavar="CLAIM", help=f"one of {', '.join(RULES)} (default: all)")
    args = parser.parse_args()
    unknown = [c for c in args.claims if c not in RULES]
    if unknown:
        parser.error(f"CLAIM: allowed values are {', '.join(RULES)}; got {', '.join(unknown)}")
    main(args.claims)
