#include "analysis/diagnosis/rules.h"

#include <array>

#include <fmt/format.h>

namespace mi::analysis {
namespace {

constexpr FindingSeverity kInfo = FindingSeverity::kInfo;
constexpr FindingSeverity kWarning = FindingSeverity::kWarning;

// The table. Thresholds: a rule fires when its measured value is above the
// threshold ("share" 0..1 of the basis time, "count" of occurrences).
constexpr std::array kRules = {
    RuleSpec{
        kRuleLayoutConversionShare,
        "Layout conversions take a large share of compute time", kWarning, 0.05,
        "share",
        "Tasks that only change a tensor's memory layout (CANN TransData / "
        "TransDataRNN / FormatTransfer, ONNX Runtime NCHWc ReorderInput / "
        "ReorderOutput, and Transpose, TransposeD or Cast nodes the compiler "
        "inserted or GE named trans_*) do no useful arithmetic. The share is "
        "their time over all compute task time (as CANN's op_statistic "
        "ratio; collective communication excluded).",
        "Keep tensors in the layout the device prefers end to end: on Ascend "
        "use the private formats (NC1HWC0, FRACTAL_Z) between adjacent ops, "
        "avoid ops without a native kernel for that format, and check the "
        "precision mode does not insert Casts; on ONNX Runtime keep "
        "consecutive NCHWc-capable ops together so reorders are not needed "
        "between them."},
    RuleSpec{
        kRuleDataMovementShare,
        "Data movement takes a large share of compute and copy time", kWarning,
        0.10, "share",
        "Copies (host to device, device to host, device to device, "
        "ONNX Runtime Memcpy nodes, CANN TensorMove) move bytes without "
        "computing. The share is their time over all compute and "
        "data-movement task time (collective communication excluded: it "
        "waits on other ranks).",
        "Keep inputs and weights resident on the device, bind outputs to "
        "device memory (I/O binding), use pinned host memory and batch small "
        "copies; a Memcpy node between execution providers means an op ran "
        "on the wrong provider: check which op falls back to the CPU."},
    RuleSpec{
        kRuleUnfusedConvBnActivation,
        "Convolution, batch norm and activation left as separate ops", kWarning,
        0, "count",
        "A convolution whose only consumer is a BatchNormalization, an "
        "activation (Relu, Clip, Sigmoid, ...) or a bias/residual Add followed "
        "by an activation: each op reads and writes the whole tensor again. "
        "Checked on the compiled graph when one is loaded, else on the "
        "framework graph (reported as info: the compiler may still fuse "
        "them).",
        "Fold BatchNormalization into the convolution weights (export in "
        "eval mode with constant folding) and use a backend optimisation "
        "level that fuses Conv + activation (ONNX Runtime: extended or all; "
        "CANN: keep the default fusion passes enabled)."},
    RuleSpec{
        kRuleUnfusedMatMulAdd, "MatMul followed by a bias Add left unfused",
        kWarning, 0, "count",
        "A MatMul whose only consumer adds a constant bias (optionally "
        "followed by an activation): a GEMM with bias epilogue does it in one "
        "kernel. Checked on the compiled graph when one is loaded, else on "
        "the framework graph (as info).",
        "Export linear layers as Gemm where the input is 2-D, or enable the "
        "backend's MatMul+Add fusion (ONNX Runtime MatMulAddFusion / "
        "FusedMatMul, CANN MatMulV2 with bias); for 3-D inputs a "
        "Reshape to 2-D around the GEMM allows it."},
    RuleSpec{
        kRuleUnfusedLayerNorm,
        "Layer normalization decomposed into elementwise ops", kWarning, 0,
        "count",
        "ReduceMean -> Sub -> Pow -> ReduceMean -> Add -> Sqrt -> Div "
        "(-> Mul -> Add): the layer norm as the exporter wrote it before "
        "opset 17, about nine kernels and several passes over the tensor "
        "instead of one. Checked on the compiled graph when one is loaded, "
        "else on the framework graph (as info).",
        "Export with opset 17 or later (LayerNormalization), or enable the "
        "backend's layer-norm fusion (ONNX Runtime LayerNormFusion at "
        "extended level, CANN LayerNorm fusion pass)."},
    RuleSpec{
        kRuleUnfusedGelu, "GELU decomposed into elementwise ops", kWarning, 0,
        "count",
        "The exact GELU as Div -> Erf -> Add -> Mul -> Mul, or the tanh "
        "approximation as Pow -> Mul -> Add -> Mul -> Tanh -> Add -> Mul: "
        "five or more kernels for one activation. Checked on the compiled "
        "graph when one is loaded, else on the framework graph (as info).",
        "Export with opset 20 or later (Gelu), or enable the backend's GELU "
        "fusion (ONNX Runtime GeluFusion / FastGeluFusion, CANN Gelu "
        "fusion pass)."},
    RuleSpec{
        kRuleRedundantTransposeReshape, "Redundant Transpose / Reshape pairs",
        kWarning, 0, "count",
        "A Transpose whose only consumer is another Transpose (the two "
        "cancel out or compose into one), a Reshape-like op (Reshape, "
        "Flatten, Squeeze, Unsqueeze) whose only consumer is another, or a "
        "Transpose with the identity permutation: data is rearranged, or a "
        "node is run, for nothing. Checked on the compiled graph when one is "
        "loaded, else on the framework graph.",
        "Remove the pair in the model source (often a permute undone by the "
        "next module), or let the optimiser cancel it (ONNX Runtime "
        "TransposeOptimizer, onnxsim); merge consecutive reshapes into one."},
    RuleSpec{
        kRuleDynamicInputShape, "Graph inputs with dynamic dimensions", kInfo,
        0, "count",
        "Graph inputs whose dimensions are symbolic or unknown. Compilers "
        "that specialise kernels per shape (CANN, TensorRT, XLA) then "
        "compile at run time, pick generic kernels or recompile when the "
        "shape changes.",
        "Fix the shapes you deploy with (export with static shapes, or "
        "onnxruntime's make_dynamic_shape_fixed), or give the compiler the "
        "shape ranges (CANN --input_shape_range / dynamic_dims gears, "
        "TensorRT optimisation profiles)."},
    RuleSpec{
        kRuleEagerLaunches,
        "Single-op (eager) launches where a graph was expected", kWarning, 100,
        "count",
        "Device kernels launched one by one from the host, each by its own "
        "launch call, with no graph launch (cudaGraphLaunch, aclmdlExecute) "
        "in the trace, and running for less time on the device than their "
        "launch call took on the host: the device waits for the host. The "
        "count is of such kernels in the worst run (iteration).",
        "Capture the step as a graph: CUDA graphs (torch.compile "
        "mode=\"reduce-overhead\", torch.cuda.graphs), on Ascend graph mode "
        "(torchair / GE, or torch_npu's aclgraph); or fuse the small ops so "
        "there are fewer launches."},
};

}  // namespace

std::string_view FindingSeverityName(FindingSeverity severity) {
  switch (severity) {
    case FindingSeverity::kInfo:
      return "info";
    case FindingSeverity::kWarning:
      return "warning";
    case FindingSeverity::kError:
      return "error";
  }
  return "info";
}

std::span<const RuleSpec> DiagnosisRuleSpecs() { return kRules; }

const RuleSpec* FindRuleSpec(std::span<const RuleSpec> rules,
                             std::string_view id) {
  for (const RuleSpec& rule : rules) {
    if (rule.id == id) return &rule;
  }
  return nullptr;
}

std::string RulesReferenceMarkdown(std::span<const RuleSpec> rules) {
  std::string out =
      "# Diagnosis rules\n\n"
      "Generated by `model-inspector diagnose --list-rules` from the rule "
      "table\n(src/analysis/diagnosis/rules.cc and the timing rules); do "
      "not edit by hand.\n\n"
      "A rule fires when its measured value is above its threshold: a "
      "`share` is\na fraction (0..1) of the time basis, a `count` a number "
      "of occurrences, `us`\nmicroseconds. Override a threshold with "
      "`--threshold RULE=VALUE` and skip a\nrule with `--disable RULE` "
      "(docs/reference/cli.md, `diagnose`). Each finding\nnames its "
      "evidence (node and task ids) and the time at stake; findings are\n"
      "sorted by severity, then by time.\n\n"
      "| rule | severity | threshold | title |\n"
      "|---|---|---|---|\n";
  for (const RuleSpec& rule : rules) {
    out += fmt::format("| `{}` | {} | {} {} | {} |\n", rule.id,
                       FindingSeverityName(rule.severity),
                       rule.default_threshold, rule.threshold_unit, rule.title);
  }
  for (const RuleSpec& rule : rules) {
    out += fmt::format(
        "\n## `{}`\n\n{}.\n\n- Severity: {}\n- Default threshold: {} {}\n"
        "\n{}\n\n**Suggestion.** {}\n",
        rule.id, rule.title, FindingSeverityName(rule.severity),
        rule.default_threshold, rule.threshold_unit, rule.why, rule.suggestion);
  }
  return out;
}

}  // namespace mi::analysis
