"""``python -m initmem`` is the ``initmem`` command."""

from .cli import main

raise SystemExit(main())
