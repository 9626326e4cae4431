"""`ferry opt`: text IR in, passes, text IR out (tools/ferry/cmd_opt.cc).

The passes themselves are tested by the .ir files in tests/passes/ir/ (ferry_tests
runs them through the same run_passes); here: the command line around it.
"""
from __future__ import annotations

from test_cli import conv_model, ferry, ferry_bin  # noqa: F401  (pytest fixtures)

IDENTITY = """graph g (%x: f32[2,3]) -> (%y) {
  %a = Identity(%x) @id
  %y = Relu(%a) @relu
}
"""


def test_passes_rewrite_and_print_text_ir(ferry, tmp_path):
    (tmp_path / "g.ir").write_text(IDENTITY)
    p = ferry("opt", "g.ir", "--passes", "eliminate_identity", check_rc=0)
    assert p.stdout == "graph g (%x: f32[2,3]) -> (%y) {\n  %y = Relu(%x) : f32[2,3] @relu\n}\n", p.stdout
    (tmp_path / "p.ir").write_text(IDENTITY.replace("@relu", '@relu <- ["model/relu"]'))
    p = ferry("opt", "p.ir", "--passes", "eliminate_dead", "--provenance", "--stats", "-o", "out.ir", check_rc=0)
    out = (tmp_path / "out.ir").read_text()
    assert "Identity(%x)" in out and '<- ["model/relu"]' in out, out
    assert "eliminate_dead.dead_node: matched 0, applied 0" in p.stderr, p.stderr


def test_without_passes_the_pipeline_runs_on_any_model(ferry, tmp_path):
    conv_model(tmp_path / "m.onnx")  # Conv + Relu
    p = ferry("opt", "m.onnx", check_rc=0)
    assert "FusedConv(" in p.stdout and "Relu(" not in p.stdout, p.stdout


def test_split_input_file_optimizes_each_case(ferry, tmp_path):
    (tmp_path / "cases.ir").write_text("// RUN: --passes eliminate_identity\n// -----\n" + IDENTITY +
                                       "// CHECK: Relu\n// -----\n" + IDENTITY.replace("Relu", "Neg"))
    p = ferry("opt", "cases.ir", "--split-input-file", "--passes", "eliminate_identity", check_rc=0)
    first, second = p.stdout.split("// -----\n")
    assert "Relu(%x)" in first and "Neg(%x)" in second and "Identity" not in p.stdout, p.stdout


def test_errors(ferry, tmp_path):
    (tmp_path / "g.ir").write_text(IDENTITY)
    p = ferry("opt", "g.ir", "--passes", "fuse_everything", check_rc=1)
    assert "no pass named 'fuse_everything'" in p.stderr and "fuse_gelu" in p.stderr, p.stderr
    (tmp_path / "bad.ir").write_text("graph g (%x: f32[2]) -> (%y) {\n  %y = Relu(%x, %x) @r\n}\n")
    p = ferry("opt", "bad.ir", "--passes", "eliminate_dead", check_rc=2)
    assert p.stderr.startswith("ferry: error: bad.ir: ") and "Relu" in p.stderr, p.stderr
