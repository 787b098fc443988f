"""`gradcli diff`: two implementations of one computation run on the same values, graph against
graph, to find where their forwards or their gradients first part ways."""
