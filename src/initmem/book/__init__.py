"""The book tooling: execute the notebooks at a preset and build the jupyter-book from them.

* :mod:`~initmem.book.runner` -- runs ``notebooks/*.py`` with papermill into ``book/generated/`` (the record) or
  ``results/explore/`` (an exploration), re-executing only what changed;
* :mod:`~initmem.book.parameters` -- a notebook's parameters: what it declares, its defaults, the values passed;
* :mod:`~initmem.book.exploration` -- explorations and the record: their folders, the banner, the re-run command;
* :mod:`~initmem.book.digest` -- what an executed page used (its modules, the result files it read, its parameters)
  and the digest over them that decides whether it is executed again;
* :mod:`~initmem.book.check` -- ``initmem book --check``: which committed pages are stale, and what changed;
* :mod:`~initmem.book.kernel` -- the kernels' environment and sockets, and what a failing cell reports;
* :mod:`~initmem.book.progress` -- the run-level progress bar while a notebook trains;
* :mod:`~initmem.book.page` -- what every notebook page shows the same way (figures, tables, verdicts, the record);
* :mod:`~initmem.book.portable` -- the chapters to download, as notebooks that run with an installed initmem;
* :mod:`~initmem.book.dist` -- the package to download: the checkout's wheel in the HTML build, the ``wheel`` role;
* :mod:`~initmem.book.build` -- ``initmem book``: the notebooks, then jupyter-book 1.x, offline;
* :mod:`~initmem.book.extension` -- the Sphinx extension named in ``_config.yml`` (MathJax on every page, figures
  pasted from another page, repository buttons, plain-text page titles);
* :mod:`~initmem.book.repository` -- the repository buttons' address, from the clone's hosted ``origin`` remote.

The top layer below the command line: it may import every other layer.
"""
