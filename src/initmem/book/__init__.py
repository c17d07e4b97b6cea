"""The book tooling: execute the notebooks at a preset and build the jupyter-book from them.

* executing: :mod:`~initmem.book.runner` (``notebooks/*.py`` into ``book/generated/`` or an exploration's folder,
  only what changed), :mod:`~initmem.book.parameters`, :mod:`~initmem.book.exploration`,
  :mod:`~initmem.book.kernel`, :mod:`~initmem.book.progress`;
* staleness: :mod:`~initmem.book.digest` (what an executed page used, and the digest that decides whether it is
  executed again) and :mod:`~initmem.book.check` (``initmem book --check``);
* the pages: :mod:`~initmem.book.page` (what every notebook page shows the same way), :mod:`~initmem.book.portable`
  (the chapters to download), :mod:`~initmem.book.dist` (the wheel to download);
* building: :mod:`~initmem.book.build` (``initmem book``: the notebooks, then jupyter-book 1.x, offline),
  :mod:`~initmem.book.site` (an exploration's own small site), :mod:`~initmem.book.extension` (the Sphinx extension
  named in ``_config.yml``) and :mod:`~initmem.book.repository` (the repository buttons' address).

The top layer below the command line: it may import every other layer but ``run`` (it receives parsed
parameters; the runs it reaches through the sweeps and the study).
"""
