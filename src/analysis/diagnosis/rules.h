#pragma once

// The diagnosis rule table: one RuleSpec row per rule, the single
// source of `diagnose --list-rules` and docs/reference/diagnosis-rules.md.
// Rule ids are stable: options, scripts and the UI refer to them.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/finding.h"

namespace mi::analysis {

// Rule ids of this module (graph and share rules).
inline constexpr std::string_view kRuleLayoutConversionShare =
    "layout_conversion_share";
inline constexpr std::string_view kRuleDataMovementShare =
    "data_movement_share";
inline constexpr std::string_view kRuleUnfusedConvBnActivation =
    "unfused_conv_bn_activation";
inline constexpr std::string_view kRuleUnfusedMatMulAdd = "unfused_matmul_add";
inline constexpr std::string_view kRuleUnfusedLayerNorm = "unfused_layer_norm";
inline constexpr std::string_view kRuleUnfusedGelu = "unfused_gelu";
inline constexpr std::string_view kRuleRedundantTransposeReshape =
    "redundant_transpose_reshape";
inline constexpr std::string_view kRuleDynamicInputShape =
    "dynamic_input_shape";
inline constexpr std::string_view kRuleEagerLaunches = "eager_launches";

// This module's rules, in documentation order.
std::span<const RuleSpec> DiagnosisRuleSpecs();

// The row of `id` in `rules`, or nullptr.
const RuleSpec* FindRuleSpec(std::span<const RuleSpec> rules,
                             std::string_view id);

// docs/reference/diagnosis-rules.md for `rules` (the session passes this
// module's rules followed by the timing rules: analyses do not include each
// other, so the full list is assembled there).
std::string RulesReferenceMarkdown(std::span<const RuleSpec> rules);

}  // namespace mi::analysis
