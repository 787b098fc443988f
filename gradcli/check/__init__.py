"""`gradcli check`, `gradcli.case` and `gradcli.assert_gradients` (and the checks of
`gradcli.pytest_plugin`): finding a file's cases, checking each one's gradients, and the
verdicts, reports and files that come of it.

Empty on purpose: `import gradcli` in a user's file imports `gradcli.check.cases` through here."""
