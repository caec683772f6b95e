"""reportgen: reproducible torch.compile performance reports, published with Sphinx.

The pipeline reads top to bottom: recipe → run → bundle → analyze → render → site.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
