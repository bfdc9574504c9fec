"""hymem's version, in a leaf so that any layer can name it (spans, metrics, exports, the CLI)
without importing the package's facade, which imports every layer."""

__version__ = "0.3.0"

__all__ = ["__version__"]
