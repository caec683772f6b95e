"""A Sphinx project of its own that embeds a bundle with the reportgen extension (built by the tests)."""

project = "reportgen extension example"
extensions = ["myst_parser", "reportgen.sphinx"]
exclude_patterns = ["_build"]
