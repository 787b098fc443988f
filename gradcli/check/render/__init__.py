"""The check report: rich for people (plain text off a terminal), JSON (`gradcli.check/1`) for tools."""
