"""The op registry (registry.py) and one test module per property checked over it."""
