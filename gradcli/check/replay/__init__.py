"""A failed case's forward run again, to find where its gradients left the graph."""
