"""The MLIR surface of the dynamir package: parse, verify, run pipelines, print, errors."""

import pytest

import dynamir
from dynamir import ir

SEED_LIKE = """
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %z = dyn.constant dense<0.0> : tensor<f32>
  %y = dyn.add %x, %z : tensor<3xf32>, tensor<f32>
  %s = dyn.sin %y : tensor<3xf32>
  dyn.guard.tensor_match "L['x']", %x type "numpy.ndarray" : tensor<3xf32>
  return %s : tensor<3xf32>
}
"""


def test_parse_print_roundtrip():
    module = ir.Module.parse(SEED_LIKE)
    text = str(module)
    assert "dyn.sin %" in text
    again = ir.Module.parse(text)
    assert str(again) == text


def test_functions_and_operations():
    module = ir.Module.parse(SEED_LIKE + "\nfunc.func @g() { return }")
    assert module.functions == ["f", "g"]
    assert module.operations("f") == [
        "dyn.constant", "dyn.add", "dyn.sin", "dyn.guard.tensor_match", "func.return"]
    assert module.operations()[0] == "func.func"
    with pytest.raises(KeyError):
        module.operations("missing")


def test_run_pipeline_anchored_and_unanchored():
    module = ir.Module.parse(SEED_LIKE)
    module.run_pipeline("builtin.module(dyn-optimize-guards)")
    # The guard moved to the top and the function lists it.
    assert module.operations("f")[0] == "dyn.guard.tensor_match"
    assert "dyn.guards = [" in str(module)
    module.run_pipeline("canonicalize")
    # x + 0.0 is not an identity for floats (-0.0 + 0.0 is +0.0): the add stays.
    assert "dyn.add" in str(module)
    module.run_pipeline("func.func(canonicalize,cse)")
    module.verify()


def test_shared_context():
    ctx = ir.Context()
    a = ir.Module.parse("func.func @a() { return }", context=ctx)
    b = ir.Module.parse("func.func @b() { return }", context=ctx)
    assert a.context is not None and b.functions == ["b"]


def test_parse_error_is_mlir_error_with_location():
    bad = "func.func @f(%a: tensor<3xf32>, %b: tensor<4xf32>) {\n" \
          "  %0 = dyn.add %a, %b : tensor<3xf32>, tensor<4xf32>\n  return\n}\n"
    with pytest.raises(dynamir.MLIRError) as info:
        ir.Module.parse(bad, filename="model.mlir")
    message = str(info.value)
    assert "model.mlir:2:8" in message
    assert "shapes are not broadcast-compatible: size 3 vs 4" in message


def test_syntax_error_is_mlir_error():
    with pytest.raises(dynamir.MLIRError, match="expected"):
        ir.Module.parse("func.func @f( {")


def test_bad_pipeline_is_mlir_error():
    module = ir.Module.parse(SEED_LIKE)
    with pytest.raises(dynamir.MLIRError, match="no-such-pass"):
        module.run_pipeline("builtin.module(no-such-pass)")


def test_bad_pass_option_is_mlir_error():
    module = ir.Module.parse(SEED_LIKE)
    with pytest.raises(dynamir.MLIRError, match="canonicalize"):
        module.run_pipeline("builtin.module(canonicalize{max-iterations=oops})")


def test_verify_reports_located_errors():
    # The generic form lets an invalid op through the parser's custom syntax but not the
    # verifier.
    text = ('func.func @f(%a: tensor<3xf32>) {\n'
            '  %0 = "dyn.exp"(%a) : (tensor<3xf32>) -> tensor<4xf32>\n  return\n}\n')
    with pytest.raises(dynamir.MLIRError, match=r"<string>:2:8: error: 'dyn.exp' op inferred"):
        ir.Module.parse(text)
