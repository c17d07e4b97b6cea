"""The package version (also the ``version`` of ``pyproject.toml``, read from here at build time)."""

__version__ = "0.1.0"
