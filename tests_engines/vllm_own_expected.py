"""The expected outcome of every vLLM 0.33.0 test case run through the toolwire adapters
(``test_vllm_own_cases.py``): a case passes unless a rule below names it, and a case a rule names must fail.
Each rule names the divergence class the failure belongs to (documented in docs/engines.md, "vLLM's own
test cases"); the classes were assigned by reading each failing case against the family's wire format.

A rule is (test module, test name pattern (fnmatch, on the name after ``::``), class); the first rule that
matches decides, and class None means the case must pass (it carves passing cases out of a broader rule).
"""

from __future__ import annotations

CLASSES = {
    "start_state": "vLLM's parser assumes where the output starts (inside reasoning); the adapter takes the start "
                   "from the prompt or chat_template_kwargs, which the case does not give, so it starts where the "
                   "family's generation prompt starts",
    "whitespace": "toolwire keeps the bytes the model wrote (whitespace around markers, in content and values); "
                  "vLLM strips",
    "value_typing": "argument typing: toolwire types values by JSON Schema only (no 'float' type name, no "
                    "re-typing of a value the schema says is a string, leading zeros kept in strings)",
    "variant_rejected": "a spelling vLLM accepts that toolwire does not read as a call (not the family's template "
                        "markers, or not proven a call: fail-closed)",
    "variant_accepted": "an output vLLM rejects or leaves as text that toolwire reads (as a call, with a "
                        "diagnostic), or a wrapper toolwire keeps as the model wrote it",
    "truncation": "an output cut inside a call: toolwire reports it truncated with its arguments closed as valid "
                  "JSON (or keeps the partial call out of the arguments); vLLM streams the raw prefix",
    "content_around_calls": "text after or between calls: toolwire keeps it as content; vLLM drops it",
    "reasoning_end_ids": "is_reasoning_end / extract_content_ids / count over token ids: the adapter answers "
                         "from the last reasoning marker in the ids (and drives the whole output itself), not "
                         "from vLLM's per-family rules over marker-dense or prior-turn ids",
    "vllm_internals": "the case reads or replaces internals of vLLM's own class (private attributes, regexes, "
                      "methods outside the ToolParser / ReasoningParser contract, registry identity, its "
                      "engine's count_reasoning_tokens)",
    "request_adjust": "adjust_request: the adapter sets skip_special_tokens=False whenever tools are sent and "
                      "never forces JSON output",
    "no_tokenizer": "the case needs the model's real tokenizer (marker token ids), which ../shared does not "
                    "have; the stand-in gives text only",
    "empty_reasoning": "an empty reasoning block: the adapter reports no reasoning (None); vLLM returns ''",
    "append_think": "vLLM's minimax_m2_append_think parser hands the reasoning on as content with '<think>' "
                    "prepended; toolwire always splits reasoning from content",
}

RULES: list[tuple[str, str, str | None]] = [
    # ---------------------------------------------------------------- tool parsers
    ("test_deepseekv31_tool_parser.py", "test_extract_tool_calls_with_multiple_tools", "content_around_calls"),
    ("test_deepseekv32_tool_parser.py", "TestExtractToolCalls::test_string_attr_true_coerced_by*", "value_typing"),
    ("test_deepseekv32_tool_parser.py", "TestExtractToolCalls::test_null_coerced_back_to_string_by_schema",
     "value_typing"),
    ("test_deepseekv32_tool_parser.py", "TestExtractToolCalls::test_number_param", "value_typing"),
    ("test_deepseekv32_tool_parser.py", "TestExtractToolCalls::test_arguments_wrapper_repaired", "variant_accepted"),
    ("test_deepseekv32_tool_parser.py", "TestExtractToolCalls::test_input_wrapper_repaired", "variant_accepted"),
    ("test_deepseekv32_tool_parser.py",
     "TestExtractToolCallsStreaming::test_string_attr_true_coerced_by_schema_streaming", "value_typing"),
    ("test_deepseekv32_tool_parser.py",
     "TestExtractToolCallsStreaming::test_streaming_matches_non_streaming_conversion_fallbacks", "value_typing"),
    ("test_deepseekv4_tool_parser.py", "test_function_calls_wrapper_is_not_recognized", "variant_accepted"),
    ("test_deepseekv4_tool_parser.py", "test_missing_tool_calls_wrapper_is_recovered", "variant_rejected"),
    ("test_deepseekv4_tool_parser.py", "test_extract_tool_calls_arguments_wrapper", "variant_accepted"),
    ("test_gemma4_tool_parser.py", "TestExtractToolCalls::test_text_before_tool_call", "whitespace"),
    ("test_gemma4_tool_parser.py", "TestExtractToolCalls::test_incomplete_tool_call", "truncation"),
    ("test_gemma4_tool_parser.py", "TestBareAndMalformedOpeners::test_*malformed*", "variant_rejected"),
    ("test_gemma4_tool_parser.py", "TestBareAndMalformedOpeners::test_three_mixed_calls", "variant_rejected"),
    ("test_glm47_moe_tool_parser.py", "TestGlm47ExtractToolCalls::test_whitespace_content_none", "whitespace"),
    ("test_glm4_moe_tool_parser.py", "test_glm45_uses_shared_glm47_parser", "vllm_internals"),
    ("test_glm4_moe_tool_parser.py", "test_extract_tool_calls_with_glm45_newline_format", "whitespace"),
    ("test_granite4_tool_parser.py", "test_tool_call_parser_complex*", "whitespace"),
    ("test_hermes_tool_parser.py", "test_hermes_parser_non_streaming_tool_call_invalid_json*", "variant_accepted"),
    ("test_hy_v3_tool_parser.py", "TestHYV3ExtractToolCalls::test_zero_arg*", "variant_rejected"),
    ("test_hy_v3_tool_parser.py", "TestHYV3ExtractToolCalls::test_args*", "variant_rejected"),
    ("test_hy_v3_tool_parser.py", "TestHYV3ExtractToolCalls::test_content_before", "variant_rejected"),
    ("test_hy_v3_tool_parser.py", "TestHYV3ExtractToolCalls::test_multiple", "variant_rejected"),
    ("test_hy_v3_tool_parser.py", "TestHYV3ExtractToolCalls::test_empty_content_none", "variant_rejected"),
    ("test_hy_v3_tool_parser.py", "TestHYV3ExtractToolCallsStreaming::test_no_tool_call_streaming", None),
    ("test_hy_v3_tool_parser.py", "TestHYV3ExtractToolCallsStreaming::*", "variant_rejected"),
    ("test_kimi_k2_tool_parser.py", "TestExtractToolCalls::test_invalid_funcall_id_skipped", "variant_accepted"),
    ("test_kimi_k2_tool_parser.py", "TestStreamingEdgeCases::test_truncated_tool_call_no_end_marker", "truncation"),
    ("test_kimi_k2_tool_parser.py", "TestStreamingEdgeCases::test_content_after_tool_section",
     "content_around_calls"),
    ("test_kimi_k2_tool_parser.py", "TestAdjustRequest::test_no_change_when_tool_choice_none", "request_adjust"),
    ("test_llama3_json_tool_parser.py", "test_extract_tool_calls_simple", "variant_rejected"),
    ("test_llama3_json_tool_parser.py", "test_extract_tool_calls_multiple_json_with_surrounding_text",
     "variant_rejected"),
    ("test_llama3_json_tool_parser.py", "test_extract_tool_calls_invalid_json", "variant_accepted"),
    ("test_llama3_json_tool_parser.py", "test_regex_timeout_handling", "vllm_internals"),
    ("test_llama4_pythonic_tool_parser.py", "test_tool_call*", "variant_rejected"),
    ("test_llama4_pythonic_tool_parser.py", "test_streaming_tool_call_with_large_steps", "variant_rejected"),
    ("test_llama4_pythonic_tool_parser.py", "test_regex_timeout_handling*", "vllm_internals"),
    ("test_minimax_m3_tool_parser.py", "test_required_tool_choice_keeps_native_syntax", "request_adjust"),
    ("test_minimax_m3_tool_parser.py", "test_*_nested_tool_call", "value_typing"),
    ("test_poolside_v1_tool_parser.py", "test_streaming_responses_request_*", "vllm_internals"),
    ("test_qwen3coder_tool_parser.py", "test_extract_tool_calls_type_conversion", "value_typing"),
    ("test_qwen3coder_tool_parser.py", "test_extract_tool_calls_streaming_missing_opening_tag*", "variant_rejected"),
    ("test_step3p5_tool_parser.py", "test_extract_tool_calls_fallback_no_tags", "variant_rejected"),
    ("test_step3p5_tool_parser.py", "test_extract_tool_calls_type_conversion*", "value_typing"),
    ("test_step3p5_tool_parser.py", "test_extract_tool_calls_non_streaming_mixed_content_and_multiple_tool_calls",
     "content_around_calls"),
    # ---------------------------------------------------------------- reasoning parsers
    ("test_deepseekr1_reasoning_parser.py", "test_reasoning[[]no_content_token[]]", "start_state"),
    ("test_deepseekr1_reasoning_parser.py", "test_reasoning[[]no_reasoning_token_streaming[]]", "start_state"),
    ("test_deepseekr1_reasoning_parser.py", "test_reasoning[[]empty_streaming[]]", "start_state"),
    ("test_deepseekr1_reasoning_parser.py", "test_reasoning[[]shortest_streaming[]]", "empty_reasoning"),
    ("test_deepseekr1_reasoning_parser.py", "test_reasoning[[]shortest_with_think[]]", "empty_reasoning"),
    ("test_deepseekr1_reasoning_parser.py", "test_reasoning[[]empty[]]", "empty_reasoning"),
    ("test_deepseekr1_reasoning_parser.py", "test_reasoning[[]new_line[]]", "whitespace"),
    ("test_deepseekv3_reasoning_parser.py", "test_parser_selection*", "vllm_internals"),
    ("test_deepseekv3_reasoning_parser.py", "test_deepseek_v4_reasoning_parser_alias", "vllm_internals"),
    ("test_deepseekv3_reasoning_parser.py", "test_count_reasoning_tokens_delegates[[]True*", "vllm_internals"),
    ("test_gemma4_reasoning_parser.py", "test_gemma4_adjust_request", "request_adjust"),
    ("test_gemma4_reasoning_parser.py", "*", "no_tokenizer"),
    ("test_glm4_moe_reasoning_parser.py", "test_reasoning[[]without_*", "start_state"),
    ("test_glm4_moe_reasoning_parser.py", "test_glm53_template_forces_reasoning*", "start_state"),
    ("test_glm4_moe_reasoning_parser.py", "test_glm47_template_honors_thinking_disable", "reasoning_end_ids"),
    ("test_hy_v3_reasoning_parser.py", "test_reasoning[[]with_think*", "variant_rejected"),
    ("test_hy_v3_reasoning_parser.py", "test_reasoning[[]complete_reasoning*", "variant_rejected"),
    ("test_hy_v3_reasoning_parser.py", "test_reasoning[[]multiline_reasoning*", "variant_rejected"),
    ("test_hy_v3_reasoning_parser.py", "test_reasoning[[]only_open_tag*", "variant_rejected"),
    ("test_hy_v3_reasoning_parser.py", "test_is_reasoning_end_full_prompt[[]*still_reasoning[]]", "variant_rejected"),
    ("test_hy_v3_reasoning_parser.py", "test_constructor_*", "vllm_internals"),
    ("test_kimi_k2_reasoning_parser.py", "test_streaming_tool_section_ends_reasoning", "reasoning_end_ids"),
    ("test_kimi_k3_reasoning_parser.py", "test_parser_selection_thinking_disabled", "vllm_internals"),
    ("test_kimi_k3_reasoning_parser.py", "test_extract_reasoning_with_*", "vllm_internals"),
    ("test_kimi_k3_reasoning_parser.py", "test_streaming_split_*", "vllm_internals"),
    ("test_kimi_k3_reasoning_parser.py", "test_thinking_disabled_streams_content", "vllm_internals"),
    ("test_kimi_k3_reasoning_parser.py", "test_count_reasoning_tokens_matches_think_channel[[]response_only[]]", None),
    ("test_kimi_k3_reasoning_parser.py", "test_count_reasoning_tokens_matches_think_channel[[]empty[]]", None),
    ("test_kimi_k3_reasoning_parser.py", "test_count_reasoning_tokens_matches_think_channel*", "vllm_internals"),
    ("test_kimi_k3_reasoning_parser.py", "test_is_reasoning_end_uses_full_input_ids", "reasoning_end_ids"),
    ("test_kimi_k3_reasoning_parser.py", "test_is_reasoning_end_ignores_stale_close_from_prior_turn",
     "reasoning_end_ids"),
    ("test_kimi_k3_reasoning_parser.py", "test_is_reasoning_end_streaming_reopened_block_is_not_ended",
     "reasoning_end_ids"),
    ("test_kimi_k3_reasoning_parser.py", "test_is_reasoning_end_streaming_thinking_disabled", "reasoning_end_ids"),
    ("test_kimi_k3_reasoning_parser.py", "test_reasoning_end_matches_reference_over_marker_dense_sequences*",
     "reasoning_end_ids"),
    ("test_kimi_k3_reasoning_parser.py", "test_adjust_request_keeps_xtml_markers_contiguous*", "request_adjust"),
    ("test_minimax_m2_append_reasoning_parser.py", "*", "append_think"),
    ("test_minimax_m2_reasoning_parser.py", "test_reasoning[[]no_end_token*", "start_state"),
    ("test_minimax_m2_reasoning_parser.py", "test_reasoning[[]empty_streaming[]]", "start_state"),
    ("test_minimax_m3_reasoning_parser.py", "test_*enabled_mode*", "start_state"),
    ("test_minimax_m3_reasoning_parser.py", "test_streaming_boundary_can_emit_reasoning_and_content", None),
    ("test_minimax_m3_reasoning_parser.py", "test_*non_leading_end_tag_is_content", None),
    ("test_minimax_m3_reasoning_parser.py", "test_streaming_*", "reasoning_end_ids"),
    ("test_minimax_m3_reasoning_parser.py", "test_token_id_helpers*", "reasoning_end_ids"),
    ("test_nemotron_v3_reasoning_parser.py", "test_nemotron_v3_reasoning[[]without_start_token*", "start_state"),
    ("test_nemotron_v3_reasoning_parser.py", "test_nemotron_v3_force_nonempty_content_moves_into_content",
     "vllm_internals"),
    ("test_qwen3_reasoning_parser.py", "*-without_start_token*", "start_state"),
    ("test_qwen3_reasoning_parser.py", "*-without_think*", "start_state"),
    ("test_qwen3_reasoning_parser.py", "*-truncated_no_start_token*", "start_state"),
    ("test_qwen3_reasoning_parser.py", "*-tool_call_no_think_end*", "start_state"),
    ("test_qwen3_reasoning_parser.py", "*-end_token_grouped_with_content[]]", "start_state"),
    ("test_qwen3_reasoning_parser.py", "*-no_start_end_grouped_with_content[]]", "start_state"),
    ("test_qwen3_reasoning_parser.py", "*-tool_call_implicit_reasoning_end[]]", "start_state"),
    ("test_qwen3_reasoning_parser.py", "*-tool_call_with_think_no_end*", "whitespace"),
    # every case asserts isinstance(parser, Step3p5ParserReasoningAdapter) first
    ("test_step3p5_reasoning_parser.py", "test_reasoning*", "vllm_internals"),
]
