"""Add the digest of what each committed page shows (``metadata["initmem"]["cells"]``, :func:`initmem.book.digest.
cells_digest`) to the pages executed before pages recorded it, without executing them.

Usage: python scripts/record_page_cells.py [--root DIR]

Run once, on a tree whose committed pages are as they were executed (``git status book/generated`` clean): the digest
it records is of the pages as they are, so a page edited by hand before it runs would be taken as executed so. A page
that records its cells already is left as it is; only the record's metadata changes, written as the runner writes it.
"""

from __future__ import annotations

import argparse
import codecs
from pathlib import Path

import nbformat

from initmem.base.files import atomic_write
from initmem.base.paths import find_repo_root
from initmem.book.digest import cells_digest
from initmem.study.design.layout import RECORD_OUT_DIR


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=None, help="the repository (default: the one around the working directory)")
    root = find_repo_root(parser.parse_args(argv).root)
    for path in sorted((root / RECORD_OUT_DIR).glob("[!.]*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        record = nb.metadata.get("initmem")
        if not record or "cells" in record:
            continue
        record["cells"] = cells_digest(nb)
        atomic_write(path, lambda handle, nb=nb: nbformat.write(nb, codecs.getwriter("utf-8")(handle)))
        print(f"{Path(path).relative_to(root)}: cells {record['cells'][:12]}")


if __name__ == "__main__":
    main()
