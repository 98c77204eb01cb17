#!/usr/bin/env bash
# Downloads, here, the wheels bench/gpu_check.sh installs on the GPU machine, which reaches no
# package index: Quadrants 1.3.3 (the peer of every GPU figure) and the pure-Python packages the
# machine's image lacks (Quadrants' dill and pydantic, platformdirs for qdlab's cache directory),
# for its Python 3.12 on x86-64. They go to .whl/ (ignored through .git/info/exclude), 44 MB in all;
# the device run names it in `carry`. Genesis cannot travel (its wheel alone is 84 MB).
# Usage, in the repo's root: bash bench/gpu_wheels.sh   (PYTHON: a Python with pip; .venv's default)
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
mkdir -p .whl
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
    quadrants==1.3.3 dill==0.4.1 pydantic==2.14.4 pydantic_core==2.50.5 annotated-types==0.8.0 \
    typing-inspection==0.4.5 typing_extensions==4.16.0 platformdirs==4.14.9
exclude="$(git rev-parse --git-common-dir)/info/exclude"
mkdir -p "$(dirname "$exclude")"
grep -qx '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >>"$exclude"
ls -l .whl
du -cb .whl/*.whl | tail -1
