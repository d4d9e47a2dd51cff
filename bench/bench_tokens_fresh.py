"""Render + token ids on new conversations: ``bench_tokens``' table 1 when no call renders a conversation twice.

``bench_tokens`` renders one conversation again and again, so from the second call on toolwire knows the ids of
every run of plain text between control tokens (:meth:`toolwire.tokenize.Vocabulary.encode_run`): the case of
an agent that renders its whole history again each turn. Here every call renders a conversation not rendered
before: each message's text and each call's arguments carry a per-call tag (``(#k)``, ``"ref": k``), so only
the template's own runs (``user\\n``, ``assistant\\n``, the newlines) repeat; pre-tokens (words) seen before
are still known, as for any new conversation on a running server.

Columns: CPU µs per call of ``Format.render(...).token_ids(tokenizer)`` (Qwen3's real tokenizer) and of
``tml-renderers``' ``render_for_completion`` with the conversion of the messages (as ``bench_tokens``), both
over the same pre-built list of new conversations (median of 5 batches), the ratio tml / toolwire, and whether
the ids agree on the first conversation.
"""

from __future__ import annotations

import json
import statistics
import time

import toolwire
from bench import harness
from bench.bench_render import TOOLS, conversation
from bench.bench_tokens import TOKENIZER


def tagged(messages: list[dict], k: int) -> list[dict]:
    """``messages`` with the tag ``k`` in every non-empty text and in every call's arguments."""
    out = []
    for message in messages:
        message = dict(message)
        if message["content"]:
            message["content"] = f"{message['content']} (#{k})"
        if message.get("tool_calls"):
            message["tool_calls"] = [{**call, "function": {**call["function"], "arguments": json.dumps(
                {**json.loads(call["function"]["arguments"]), "ref": k})}} for call in message["tool_calls"]]
        out.append(message)
    return out


def _batches_us(fn, items: list, batches: int = 5) -> float:
    """Median over ``batches`` equal slices of ``items`` of CPU µs per ``fn(item)``."""
    size = len(items) // batches
    samples = []
    for b in range(batches):
        chunk = items[b * size:(b + 1) * size]
        start = time.process_time()
        for item in chunk:
            fn(item)
        samples.append((time.process_time() - start) / len(chunk) * 1e6)
    return statistics.median(samples)


def _tml_render():
    """A function rendering OpenAI-style messages to tml-renderers' Qwen3 ids, or None without tml."""
    if harness.optional_import("tml_renderers") is None:
        return None
    from tml_renderers import chat, renderers

    renderer = renderers.Qwen3()
    declare = chat.Message(content=chat.ToolDeclareJson([
        chat.ToolSpecJson(t["type"], t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
        for t in TOOLS]), author=chat.Author(chat.AuthorKind.System))

    def render(messages: list[dict]):
        return renderer.render_for_completion([declare] + chat.MessageList.from_oss_messages(messages).messages)

    def ids(messages: list[dict]) -> list[int]:
        spans, _parser = render(messages)
        return [t for span in spans for t in span.span.tokens]

    return render, ids


def main() -> None:
    """Print the table (markdown)."""
    if not TOKENIZER.is_dir():
        print("\n(../shared/real/tokenizers/Qwen3 missing: no token benchmarks)")
        return
    from toolwire.tokenize import load_tokenizer

    tokenizer = load_tokenizer(str(TOKENIZER))
    fmt = toolwire.get_format("qwen3")
    tml = _tml_render()
    rows = []
    for turns, calls in ((2, 2000), (50, 200)):
        base = conversation(turns)
        fresh = [tagged(base, k) for k in range(1, 2 * calls + 2)]
        ours_ids = fmt.render(fresh[0], TOOLS, thinking=True).token_ids(tokenizer)
        t_ours = _batches_us(lambda m: fmt.render(m, TOOLS, thinking=True).token_ids(tokenizer), fresh[1:calls + 1])
        if tml is None:
            rows.append([turns, f"{t_ours:,.0f}", "(tml-renderers missing)", "-", "-"])
            continue
        render, ids = tml
        same = ids(fresh[0]) == ours_ids
        t_tml = _batches_us(render, fresh[calls + 1:])
        rows.append([turns, f"{t_ours:,.0f}", f"{t_tml:,.0f}", f"{t_tml / t_ours:.2f}x", "yes" if same else "NO"])
        harness.record("render + ids, new conversations", f"qwen3, {turns} turns, µs", f"{t_ours:,.0f}",
                       "tml-renderers Qwen3 (Rust)", f"{t_tml:,.0f}", f"{t_tml / t_ours:.2f}x")
    print("\nrender + token ids, Qwen3, a new conversation every call (CPU µs per render; ratio = tml-renderers / "
          "toolwire)\n")
    harness.print_table(["turns", "toolwire µs", "tml-renderers µs", "ratio", "same ids"], rows, align="rrrrl")


if __name__ == "__main__":
    print(harness.environment())
    main()
