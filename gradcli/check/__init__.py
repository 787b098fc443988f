"""`gradcli check`, `gradcli.case`, `gradcli.assert_gradients` and the pytest plugin: finding a file's
cases, checking each one's gradients, and the verdicts, reports and files that come of it.

Empty on purpose: `import gradcli` in a user's file imports `gradcli.check.cases` through here."""
