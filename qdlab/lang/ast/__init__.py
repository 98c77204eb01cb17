"""`quadrants.lang.ast`: the parts of Quadrants' AST compiler that programs and tests import."""
