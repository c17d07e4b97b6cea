"""The foundation: the package version, shared constants, where the repository is, how files are written and claimed.

* :mod:`~initmem.base.version` -- ``__version__``; :mod:`~initmem.base.constants` -- numbers the trainer and the
  numpy theory share (Muon's Newton-Schulz coefficients), free of torch;
* :mod:`~initmem.base.paths` -- the one repository-root lookup (never where the package is installed);
* :mod:`~initmem.base.files` -- output checks before any work, the one atomic writer, files set aside, whether
  the process that wrote a file lives; :mod:`~initmem.base.claims` -- run claims (each run trained once);
* :mod:`~initmem.base.reads` -- the result files a process read or looked for (what an executed page depends on);
  :mod:`~initmem.base.docstrings` -- where a module's docstrings are (what a page's digest leaves out);
* :mod:`~initmem.base.package_data` -- the package's data files, shape checked; :mod:`~initmem.base.bars` -- tqdm;
* :mod:`~initmem.base.numbers` -- how the book writes a number (one format everywhere), :mod:`~initmem.base.prose`
  a list in a sentence; :mod:`~initmem.base.messages` -- how a value appears in a one-line error;
  :mod:`~initmem.base.lazy` -- a mapping whose values are made when read (a page depends only on the records it read).

It imports nothing of ``initmem``; every other layer may import it.
"""
