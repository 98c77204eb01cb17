"""`quadrants.lang.ast.ast_transformers`: `graph_api`, how a call spells a `qd.graph`
construct."""
