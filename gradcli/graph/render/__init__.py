"""The graph drawn: a tree for people, dot, images, an HTML page, JSON (`gradcli.graph/1`)."""
