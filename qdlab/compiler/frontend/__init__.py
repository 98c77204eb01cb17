"""Python AST to qdlab IR: the visitor (`frontend.py`) and the mixins it is built from, one per
group of Python constructs, with the scopes, compile-time evaluation and source handling they
share."""
