#!/usr/bin/env bash
# Sets up and builds ferry, then runs the main job on the shipped example model:
# inspect it (ops, shapes, parameters, FLOPs, coverage) and run it on seeded
# random inputs, writing the outputs to examples/out/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --cli
MODEL=examples/mobilenet_v2_050.onnx
echo
echo "== ferry inspect $MODEL"
build/ferry inspect "$MODEL"
echo
echo "== ferry run $MODEL --seed 0 --output-dir examples/out"
build/ferry run "$MODEL" --seed 0 --output-dir examples/out
