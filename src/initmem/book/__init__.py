"""The book tooling: execute the notebooks at a preset and build the jupyter-book from them.

* :mod:`~initmem.book.runner` -- runs ``notebooks/*.py`` with papermill into ``book/generated/`` (the record) or
  ``results/explore/`` (an exploration), re-executing only what changed (the notebook digest);
* :mod:`~initmem.book.build` -- ``initmem book``: the notebooks, then jupyter-book 1.x, offline;
* :mod:`~initmem.book.extension` -- the Sphinx extension named in ``_config.yml`` (MathJax on every page, figures
  pasted from another page, repository buttons);
* :mod:`~initmem.book.repository` -- the repository buttons' address, from the clone's hosted ``origin`` remote.

The top layer below the command line: it may import every other layer.
"""
