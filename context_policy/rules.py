"""The reasoning-retention rules the families' policies are made of (each family's declaration in
:mod:`toolwire.families` names its rule and notes).

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


def glm53(ctx: Context, i: int) -> tuple[Action, str]:
    if ctx.extra.get("clear_thinking"):
        return glm_drop_before_last_user(ctx, i)
    return "keep", "GLM-5.3 keeps every earlier reasoning (clear_thinking=True drops it before the last user message)"


def gigachat35(ctx: Context, i: int) -> tuple[Action, str]:
    """GigaChat 3.5 drops the reasoning of assistant turns before the last user message (``drop_history_thinking``,
    on by default), in thinking mode or not. The template compares indices of two lists: the last user message's in
    the request, and the turn's in the list left once a leading developer-system and system message are taken out,
    so with such messages a turn just after the last user message counts as before it (as the template does)."""
    if ctx.extra.get("drop_history_thinking") is False:
        return "keep", "drop_history_thinking=False keeps every earlier reasoning"
    msgs = ctx.messages
    last = ctx.last_of_roles(("user",))
    shift = 1 if ctx.last("devsystem", lambda m: m.role in ("developer system", "developer_system")) >= 0 else 0
    if shift < len(msgs) and msgs[shift].role == "system":
        shift += 1
    if i - shift < last:
        return "drop", f"before the last user message (message {last}; drop_history_thinking)"
    return "keep", "after the last user message"


def gemma4(ctx: Context, i: int) -> tuple[Action, str]:
    if ctx.extra.get("preserve_thinking") and ctx.messages[i].tool_calls:
        return "keep", "preserve_thinking=True keeps a tool-call message's reasoning"
    return glm_drop_before_last_user(ctx, i)


@thinking_only
def kimi_k3(ctx: Context, i: int) -> tuple[Action, str]:
    return "keep", "in thinking mode every assistant turn writes its think channel"


DSV4_NOTE = ("In DeepSeek V4 such a message counts as a new user turn, so the keep-reasoning branch for the "
              "current tool loop never fires and earlier reasoning is silently dropped.")
QWEN_NOTE = ("Qwen counts a user message as a real query unless its whole content is a <tool_response> block.")
DS_SPLIT = "the template keeps only the text after </think>, so the model never sees that reasoning."
QWEN_THINK = "the Qwen3 template moves the text before </think> into reasoning and keeps only what follows."


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
