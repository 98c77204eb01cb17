"""The compiler, in the order data flows through it: `frontend/` (Python AST to IR), `ir/` (the IR,
its parser, printer and verifier), `passes/` (simplify, autodiff), `split/` (constructs, backward
slices, the recompute-safety gate), `codegen/` (LLVM IR, PTX, native objects, targets), `runtime/`
(launching and the quick/optimised tiers), `cache/` (binaries, manifest, memos, team cache) and
`report/` (`qd.explain`); `pipeline.py` runs them. Imports only `qdlab.core` below it."""
