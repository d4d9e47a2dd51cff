"""The built-in reasoning-retention policy of every family, in one place.

Each rule reproduces its reference (the official encoder or the model's chat template); the golden
render vectors of every family pass through them. ``thinking`` off means the family renders no earlier
reasoning at all, except where noted.
"""

from __future__ import annotations

from .boundaries import is_real_user
from .policies import (Action, Context, FamilyPolicy, PassbackRule, keep_all, keep_tool_loop, thinking_off,
                       thinking_only)


def _after_last(ctx: Context, i: int, roles: tuple[str, ...], what: str) -> tuple[Action, str]:
    last = ctx.last_of_roles(roles)
    if i > last:
        return "keep", f"after the last {what}"
    return "drop", f"before the last {what} (message {last})"


def never_rendered(ctx: Context, i: int) -> tuple[Action, str]:
    return "drop", "the template never renders earlier reasoning"


def gpt_oss(ctx: Context, i: int) -> tuple[Action, str]:
    msgs = ctx.messages
    if not msgs[i].tool_calls:
        if i == len(msgs) - 1 and not ctx.add_generation_prompt:
            return "keep", "the closing final answer rendered as history keeps its analysis"
        return "drop", "the gpt-oss template renders no earlier final answer's analysis"
    if "next_final" not in ctx.memo:  # for each message, the index of the next final answer (or None)
        nxt, following = [None] * len(msgs), None
        for j in range(len(msgs) - 1, -1, -1):
            nxt[j] = following
            if msgs[j].role == "assistant" and not msgs[j].tool_calls:
                following = j
        ctx.memo["next_final"] = nxt
    later = ctx.memo["next_final"][i]
    if later is None:
        return "keep", "a tool call's analysis is kept until a final answer follows"
    return "drop", f"a final answer (message {later}) follows this tool call"


def kimi_after_last_answer(ctx: Context, i: int) -> tuple[Action, str]:
    last = ctx.last("answer", lambda m: m.role == "assistant" and not m.tool_calls)
    if i > last:
        return "keep", "after the last assistant answer without tool calls (the current tool loop)"
    return "drop", f"at or before the last assistant answer without tool calls (message {last})"


@thinking_only
def dsml_v32(ctx: Context, i: int) -> tuple[Action, str]:
    # V3.2 renders reasoning only after the last user message, whatever drop_thinking says
    return _after_last(ctx, i, ("user", "developer"), "user message (DeepSeek V3.2 keeps only the current tool loop)")


@thinking_only
def dsml_v4(ctx: Context, i: int) -> tuple[Action, str]:
    if not ctx.drop_thinking:
        return "keep", "drop_thinking=False keeps every earlier reasoning"
    if ctx.has_tools:
        return "keep", "tools are declared: DeepSeek V4 keeps every earlier reasoning"
    # without tools, tool results merge into user turns and count as the last user message
    return _after_last(ctx, i, ("user", "developer", "tool"), "user message (tool results count as user turns)")


@thinking_only
def dsml_v41(ctx: Context, i: int) -> tuple[Action, str]:
    if not ctx.drop_thinking:
        return "keep", "drop_thinking=False keeps every earlier reasoning"
    if ctx.has_tools:
        return "keep", "tools are declared: DeepSeek V4.1 keeps every earlier reasoning"
    return _after_last(ctx, i, ("user", "developer"), "real user message (tool results do not start a turn)")


def last_real_query(ctx: Context, i: int) -> tuple[Action, str]:
    last = ctx.last("real_user", is_real_user)
    if i > last:
        return "keep", "after the last real user query (a <tool_response> user message does not count)"
    return "drop", f"before the last real user query (message {last})"


def qwen3_last_query(ctx: Context, i: int) -> tuple[Action, str]:
    """Qwen3 / Qwen3-Thinking-2507: the template counts only string content, unstripped, and with no real
    query at all it renders no earlier reasoning."""
    last = ctx.last("qwen3_query", lambda m: m.role == "user" and isinstance(m.content, str) and not (
        m.content.startswith("<tool_response>") and m.content.endswith("</tool_response>")))
    if last < 0:
        last = len(ctx.messages) - 1
    if i > last:
        return "keep", "after the last real user query (a <tool_response> user message does not count)"
    return "drop", f"before the last real user query (message {last})"


def qwen36(ctx: Context, i: int) -> tuple[Action, str]:
    if ctx.extra.get("preserve_thinking"):
        return "keep", "preserve_thinking=True keeps every earlier reasoning"
    return last_real_query(ctx, i)


def qwen38(ctx: Context, i: int) -> tuple[Action, str]:
    if ctx.extra.get("preserve_thinking") is False:
        return last_real_query(ctx, i)
    return "keep", "Qwen3.8 keeps every earlier reasoning unless preserve_thinking=False (thinking on or off)"


def nemotron3(ctx: Context, i: int) -> tuple[Action, str]:
    if ctx.extra.get("truncate_history_thinking") is False:
        return "keep", "truncate_history_thinking=False keeps every earlier reasoning"
    return _after_last(ctx, i, ("user",), "user message (Nemotron 3 keeps only the answer of earlier turns)")


def step35_last_query(ctx: Context, i: int) -> tuple[Action, str]:
    """Step 3.5: the template's query test is on the untrimmed text of the text parts (their ``value`` or
    ``text``); with no query at all nothing is kept."""
    def text(m) -> str:
        if not isinstance(m.content, list):
            return m.content or ""
        return "".join((p.model_extra or {}).get("value", p.text) or "" for p in m.content if p.type == "text")

    last = ctx.last("step35_query", lambda m: m.role == "user" and not (
        text(m).startswith("<tool_response>") and text(m).endswith("</tool_response>")))
    if last < 0:
        last = len(ctx.messages) - 1
    if i > last:
        return "keep", "after the last real user query (a <tool_response> user message does not count)"
    return "drop", f"before the last real user query (message {last})"


def laguna(ctx: Context, i: int) -> tuple[Action, str]:
    if ctx.thinking:
        return "keep", "thinking on: Laguna renders every turn's <think>reasoning</think>"
    if ctx.extra.get("preserve_thinking"):
        return "keep", "preserve_thinking=True keeps every earlier reasoning with thinking off"
    return thinking_off(ctx, i)


def lfm25(ctx: Context, i: int) -> tuple[Action, str]:
    if ctx.extra.get("preserve_thinking"):
        return "keep", "preserve_thinking=True keeps every earlier reasoning"
    return _after_last(ctx, i, ("user",), "user message (LFM2.5 keeps the reasoning of the current turn only)")


def hy3(ctx: Context, i: int) -> tuple[Action, str]:
    preserved = ctx.extra.get("preserved_thinking")
    if preserved or (preserved is None and ctx.has_tools):
        return "keep", "preserved_thinking (Hy3's default when tools are declared) keeps every earlier reasoning"
    return _after_last(ctx, i, ("user",), "user message (Hy3 without tools, or preserved_thinking=False)")


def glm_drop_before_last_user(ctx: Context, i: int) -> tuple[Action, str]:
    return _after_last(ctx, i, ("user",), "user message")


def glm47(ctx: Context, i: int) -> tuple[Action, str]:
    if ctx.extra.get("clear_thinking") is False:
        return "keep", "clear_thinking=False keeps every earlier reasoning"
    return glm_drop_before_last_user(ctx, i)


def gemma4(ctx: Context, i: int) -> tuple[Action, str]:
    if ctx.extra.get("preserve_thinking") and ctx.messages[i].tool_calls:
        return "keep", "preserve_thinking=True keeps a tool-call message's reasoning"
    return glm_drop_before_last_user(ctx, i)


@thinking_only
def kimi_k3(ctx: Context, i: int) -> tuple[Action, str]:
    return "keep", "in thinking mode every assistant turn writes its think channel"


_DSV4_NOTE = ("In DeepSeek V4 such a message counts as a new user turn, so the keep-reasoning branch for the "
              "current tool loop never fires and earlier reasoning is silently dropped.")
_QWEN_NOTE = ("Qwen counts a user message as a real query unless its whole content is a <tool_response> block.")
_DS_SPLIT = "the template keeps only the text after </think>, so the model never sees that reasoning."
_QWEN_THINK = "the Qwen3 template moves the text before </think> into reasoning and keeps only what follows."


# What each provider's API requires passed back (docs/context-policy.md quotes and sources each rule).
DEEPSEEK_PASSBACK = PassbackRule(
    provider="DeepSeek API (V3.2, V4, V4.1 thinking mode)", scope="history",
    error="The reasoning_content in the thinking mode must be passed back to the API.")
KIMI_PASSBACK = PassbackRule(
    provider="Moonshot Kimi API (thinking models)", scope="history",
    error="thinking is enabled but reasoning_content is missing in assistant tool call message at index N")
MINIMAX_PASSBACK = PassbackRule(
    provider="MiniMax API (interleaved thinking)", scope="current_turn", enforced=False,
    error="(not refused) MiniMax documents that the full assistant turn, thinking included, must be kept "
          "in history during tool use, or multi-step tool use degrades")


POLICIES: dict[str, FamilyPolicy] = {
    "deepseek_v32": FamilyPolicy(dsml_v32, passback=DEEPSEEK_PASSBACK, description="drops reasoning before the last user message; keeps the "
                                                       "current tool loop"),
    "deepseek_v4": FamilyPolicy(dsml_v4, passback=DEEPSEEK_PASSBACK, user_text_note=_DSV4_NOTE,
                                description="keeps everything when tools are declared; otherwise drops before "
                                            "the last user message (tool results count as user turns)"),
    "deepseek_v41": FamilyPolicy(dsml_v41, passback=DEEPSEEK_PASSBACK, user_text_note=_DSV4_NOTE,
                                 description="as V4, but tool-result-only user messages do not start a turn"),
    "qwen3": FamilyPolicy(qwen3_last_query, user_text_note=_QWEN_NOTE, think_in_content_note=_QWEN_THINK,
                          description="keeps reasoning after the last real user query"),
    "qwen3_thinking_2507": FamilyPolicy(qwen3_last_query, user_text_note=_QWEN_NOTE, think_in_content_note=_QWEN_THINK,
                                        description="keeps reasoning after the last real user query"),
    "qwen3_instruct_2507": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    "qwen25": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    "qwen3_coder": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    "llama31": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    "mistral_small32": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    "kimi_k2": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    "deepseek_v31": FamilyPolicy(never_rendered, think_in_content_note=_DS_SPLIT,
                                 description="never renders earlier reasoning; strips history content up to </think>"),
    "deepseek_r1": FamilyPolicy(never_rendered, think_in_content_note=_DS_SPLIT,
                                description="never renders earlier reasoning; strips history content up to </think>"),
    "qwen35": FamilyPolicy(last_real_query, user_text_note=_QWEN_NOTE, think_in_content_note=_QWEN_THINK,
                           description="keeps reasoning after the last real user query"),
    "qwen36": FamilyPolicy(qwen36, user_text_note=_QWEN_NOTE, think_in_content_note=_QWEN_THINK,
                           description="as Qwen3; preserve_thinking=True keeps everything"),
    "qwen38": FamilyPolicy(qwen38, user_text_note=_QWEN_NOTE,
                           description="keeps every earlier reasoning; preserve_thinking=False keeps only reasoning "
                                       "after the last real user query"),
    "nemotron3": FamilyPolicy(nemotron3, description="drops reasoning before the last user message (thinking on or "
                                                     "off) unless truncate_history_thinking=False"),
    "step35": FamilyPolicy(step35_last_query, user_text_note=_QWEN_NOTE,
                           description="keeps reasoning after the last real user query (always thinking)"),
    "laguna": FamilyPolicy(laguna, description="keeps every earlier reasoning with thinking on (or preserve_thinking="
                                                "True); none with thinking off"),
    "hy3": FamilyPolicy(hy3, description="keeps every earlier reasoning when tools are declared (preserved_thinking); "
                                          "otherwise only after the last user message"),
    "glm45": FamilyPolicy(glm_drop_before_last_user, description="drops reasoning before the last user message"),
    "glm46": FamilyPolicy(glm_drop_before_last_user, description="drops reasoning before the last user message"),
    "glm47": FamilyPolicy(glm47, description="drops before the last user message unless clear_thinking=False"),
    "minimax_m2": FamilyPolicy(glm_drop_before_last_user, passback=MINIMAX_PASSBACK, description="keeps reasoning after the last user message"),
    "gpt_oss": FamilyPolicy(gpt_oss, description="keeps a tool call's analysis until a final answer follows; "
                                                 "drops final answers' analysis"),
    "seed_oss": FamilyPolicy(keep_all, description="keeps every earlier reasoning (trimmed), thinking on or off"),
    "kimi_k2_thinking": FamilyPolicy(kimi_after_last_answer, passback=KIMI_PASSBACK,
                                     description="keeps reasoning after the last assistant answer without tool "
                                                 "calls (the current tool loop)"),
    # Hermes 3 tool_use: no reasoning field anywhere in the template (a call turn drops even its content)
    "hermes3": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    # Granite 4.1 / 4.0: the template reads only content and tool_calls of an assistant message
    "granite4": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    # Llama 3.2: as Llama 3.1, the template has no reasoning field
    "llama32": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    # Llama 4: the template reads no reasoning field (its <|reasoning_thinking_start|> tokens are never written)
    "llama4": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    # Ministral 3: every assistant reasoning is passed as a thinking chunk and the template writes each one
    "ministral3": FamilyPolicy(keep_all, description="keeps every earlier reasoning (as [THINK] chunks)"),
    # Gemma 4: the template writes reasoning after the last user message (thinking on or off), and on tool-call
    # messages with preserve_thinking=True
    "gemma4": FamilyPolicy(gemma4, description="keeps reasoning after the last user message; preserve_thinking=True "
                                               "also keeps tool-call turns"),
    # MiniMax-M3: "all-turn visible": every assistant turn writes its reasoning, thinking mode whatever
    "minimax_m3": FamilyPolicy(keep_all,
                               description="keeps every earlier reasoning (all-turn visible), in every thinking mode"),
    # Kimi K3: in thinking mode every assistant turn has a think channel; with thinking off none does
    # LFM2.5: <think> blocks after the last user message, or everywhere with preserve_thinking=True (no thinking switch)
    "lfm25": FamilyPolicy(lfm25, description="keeps reasoning after the last user message; preserve_thinking=True "
                                             "keeps everything"),
    # Llama 4 pythonic (vLLM's template): no reasoning field anywhere
    "llama4_pythonic": FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    "kimi_k3": FamilyPolicy(kimi_k3,
                            description="keeps every earlier reasoning in thinking mode; none with thinking off"),
}


def family_policy(format_name: str) -> FamilyPolicy:
    """The built-in policy of a format; formats without a specific entry keep the current tool loop."""
    return POLICIES.get(format_name) or FamilyPolicy(keep_tool_loop, description="keeps the current tool loop")
