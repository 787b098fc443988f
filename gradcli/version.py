"""gradcli's version, in a module of its own: the documents name it, and importing it imports
nothing else (`gradcli/__init__.py` imports `gradcli.case`)."""

__version__ = "0.1.0"
