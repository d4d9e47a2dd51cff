"""A real vLLM server for the serving tests: ``vllm launch render`` (vLLM's CPU-only render server: render and
derender, no weights) on loopback, over a model folder built in a temporary directory from a ``config.json``
and the real tokenizer files of ../shared/real/tokenizers.

:class:`RenderServer` starts one and waits for ``/health``; a server that does not come up fails the test that
needed it, with the end of the server's log. :meth:`RenderServer.stop` ends it with SIGTERM and fails unless
it exits cleanly (status 0). The tests keep one server per configuration per session (module-scoped fixtures).

The request shapes are the SDKs' own (``openai`` for Chat Completions and Responses, ``anthropic`` for
Messages); :func:`responses_request` and :func:`anthropic_request` write a Chat Completions conversation in the
other two APIs, or raise :class:`NotExpressible` with the reason.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from conftest import REAL_TOKENIZER, SHARED, TOKENIZERS

VLLM = str(Path(sys.executable).parent / "vllm")
TEMPLATES = SHARED / "real" / "templates"
MODEL = "toolwire-test"  # --served-model-name
START_TIMEOUT = float(os.environ.get("TOOLWIRE_SERVER_TIMEOUT", "600"))

# families whose golden vectors go through a server: those with a real tokenizer in ../shared (or the
# comma-separated TOOLWIRE_SERVING_FAMILIES: the second venv's run, Makefile)
# comma-separated TOOLWIRE_SERVING_FAMILIES: the second venv's run, Makefile). DeepSeek V4.1 is parsed with the V4
# tokenizer elsewhere, but its prompts use markers (<｜System｜> ...) that are not tokens of it: not served here.
NOT_SERVED = {"deepseek_v41": "its markers (<｜System｜> ...) are not tokens of the DeepSeek-V4 tokenizer in ../shared"}
FAMILIES = [f for f in REAL_TOKENIZER if f not in NOT_SERVED
            and f in os.environ.get("TOOLWIRE_SERVING_FAMILIES", f).split(",")]

# a small model of each tokenizer's architecture (vLLM reads the config; the render server loads no weights)
CONFIGS = {
    "Qwen3": {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 151936,
              "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 2,
              "num_key_value_heads": 1, "head_dim": 32, "max_position_embeddings": 40960, "rms_norm_eps": 1e-6,
              "rope_theta": 1000000, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
              "bos_token_id": 151643, "eos_token_id": 151645},
    "DeepSeek-V3": {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "vocab_size": 129280,
                    "hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32,
                    "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2,
                    "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2, "kv_lora_rank": 16,
                    "q_lora_rank": 16, "qk_rope_head_dim": 16, "qk_nope_head_dim": 16, "v_head_dim": 16,
                    "max_position_embeddings": 163840, "bos_token_id": 0, "eos_token_id": 1,
                    "torch_dtype": "bfloat16", "tie_word_embeddings": False},
}
CONFIGS["DeepSeek-V4"] = CONFIGS["DeepSeek-V3"]

# vLLM's own renderer and parsers for each family: (tokenizer mode, chat template, tool parser, reasoning parser)
OWN = {
    "qwen25": ("hf", "Qwen2.5-7B-Instruct.jinja", "hermes", None),
    "qwen3": ("hf", "Qwen3-8B.jinja", "hermes", "qwen3"),
    "qwen3_instruct_2507": ("hf", "Qwen3-4B-Instruct-2507.jinja", "hermes", None),
    "qwen3_thinking_2507": ("hf", "Qwen3-4B-Thinking-2507.jinja", "hermes", "qwen3"),
    "qwen3_coder": ("hf", "Qwen3-Coder.jinja", "qwen3_coder", None),
    "qwen35": ("hf", "Qwen3.5-4B.jinja", "qwen3_coder", "qwen3"),
    "qwen36": ("hf", "Qwen3.6-35B-A3B.jinja", "qwen3_coder", "qwen3"),
    "deepseek_v31": ("hf", "DeepSeek-V3.1.jinja", "deepseek_v31", "deepseek_v3"),
    "deepseek_r1": ("hf", "DeepSeek-R1.jinja", "deepseek_v3", "deepseek_r1"),
    "deepseek_v32": ("deepseek_v32", None, "deepseek_v32", "deepseek_v3"),
    "deepseek_v4": ("deepseek_v4", None, "deepseek_v4", "deepseek_v4"),
}


def model_dir(tokenizer: str, root: Path) -> Path:
    """A model folder for ``tokenizer`` (a folder of ../shared/real/tokenizers): its files (a gzipped
    tokenizer.json unpacked) and a config.json (no weights)."""
    folder = root / tokenizer
    if (folder / "config.json").exists():
        return folder
    folder.mkdir(parents=True)
    source = TOKENIZERS / tokenizer
    for item in source.iterdir():
        if item.name == "tokenizer.json.gz":
            (folder / "tokenizer.json").write_bytes(gzip.decompress(item.read_bytes()))
        elif item.is_file() and item.suffix == ".json" or item.name in ("vocab.json", "merges.txt"):
            (folder / item.name).write_bytes(item.read_bytes())
    (folder / "config.json").write_text(json.dumps(CONFIGS[tokenizer]), encoding="utf-8")
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RenderServer:
    """One ``vllm launch render`` process on loopback."""

    def __init__(self, model: Path, args: list[str], log: Path):
        self.model, self.args, self.log_path = model, args, log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.started_in = 0.0

    def start(self) -> "RenderServer":
        # no GPU is visible (CUDA_VISIBLE_DEVICES=""): vLLM 0.34 on x86 then accepts the installed Triton
        # without a CPU backend (the render server runs no kernel) instead of refusing to start
        env = dict(os.environ, VLLM_TARGET_DEVICE="cpu", CUDA_VISIBLE_DEVICES="", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1", VLLM_LOGGING_LEVEL="INFO")
        cmd = [VLLM, "launch", "render", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
               "--served-model-name", MODEL, *self.args]
        self._log = self.log_path.open("w", encoding="utf-8")
        self._log.write(" ".join(cmd) + "\n")
        self._log.flush()
        began = time.monotonic()
        self.process = subprocess.Popen(cmd, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        while time.monotonic() - began < START_TIMEOUT:
            if self.process.poll() is not None:
                self._fail(f"the server exited with status {self.process.returncode} before it was up")
            try:
                if httpx.get(self.url + "/health", timeout=5).status_code == 200:
                    self.started_in = time.monotonic() - began
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.process.kill()
        self.process.wait()
        self._fail(f"the server was not up after {START_TIMEOUT:.0f} s")

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def _fail(self, why: str) -> None:
        tail = "\n".join(self.log().splitlines()[-80:])
        pytest.fail(f"vllm launch render {' '.join(self.args)}: {why}. Its log ({self.log_path}):\n{tail}",
                    pytrace=False)

    def stop(self) -> None:
        """SIGTERM, then the process must exit by itself, with status 0 (a clean shutdown)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            self._fail("the server did not stop within 60 s of SIGTERM")
        self._log.close()
        if code != 0:
            self._fail(f"the server stopped with status {code}")

    # -- clients
    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key="unused", max_retries=0, timeout=120)

    def anthropic(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self.url, api_key="unused", max_retries=0, timeout=120)

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=120)


def toolwire_args(family: str) -> list[str]:
    """toolwire renders and parses: the flags of README "Serving with vLLM / SGLang"."""
    name = "toolwire_" + family
    return ["--tokenizer-mode", name, "--enable-auto-tool-choice", "--tool-call-parser", name,
            "--reasoning-parser", name]


def own_args(family: str) -> list[str]:
    """vLLM's own renderer and parsers for the family; the HF template comes with each request (trusted)."""
    mode, _template, tool, reasoning = OWN[family]
    args = ["--tokenizer-mode", mode, "--enable-auto-tool-choice", "--tool-call-parser", tool]
    if mode == "hf":
        args.append("--trust-request-chat-template")
    if reasoning:
        args += ["--reasoning-parser", reasoning]
    return args


def own_key(family: str) -> tuple:
    """Families that share vLLM's own server (same tokenizer, mode and parsers; the template is per request)."""
    mode, _template, tool, reasoning = OWN[family]
    return REAL_TOKENIZER[family], mode, tool, reasoning


def own_template(family: str) -> str | None:
    template = OWN[family][1]
    return (TEMPLATES / template).read_text(encoding="utf-8") if template else None


RESULTS: dict[tuple[str, str], dict[str, Any]] = {}
"""(table, family) -> counts, printed at the end of the session (conftest's terminal summary)."""


def record(table: str, family: str, **counts: Any) -> None:
    RESULTS.setdefault((table, family), {}).update(counts)


# ---------------------------------------------------------------- a chat conversation in the other APIs

class NotExpressible(Exception):
    """The conversation cannot be written in that API (the reason is the message)."""


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    raise NotExpressible("list content")


def _parts(content: Any, part_type: str) -> Any:
    """Text parts (a user message's list content) in the other API's part type; a string as it is."""
    if isinstance(content, list):
        return [{"type": part_type, "text": part["text"]} for part in content]
    return content


def responses_request(row: dict) -> dict:
    """The golden render request as a Responses request (``openai.types.responses`` item shapes): system and
    developer messages as input messages of those roles, an assistant turn as its reasoning item, output
    message and function calls (vLLM joins them into one assistant message), tool results as
    ``function_call_output`` items."""
    request, options = row["request"], row["options"]
    if options.get("add_generation_prompt") is False:
        raise NotExpressible("add_generation_prompt=False")
    items: list[dict] = []
    for n, message in enumerate(request["messages"]):
        role = message["role"]
        if role in ("system", "developer"):
            items.append({"role": role, "content": _text(message["content"])})  # EasyInputMessageParam
        elif role == "user":
            items.append({"role": role, "content": _parts(message["content"], "input_text")})
        elif role == "assistant":
            if message.get("reasoning_content"):
                items.append({"type": "reasoning", "id": f"rs_{n}", "summary": [],
                              "content": [{"type": "reasoning_text", "text": message["reasoning_content"]}]})
            if message.get("content"):
                items.append({"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                              "content": [{"type": "output_text", "text": _text(message["content"]),
                                           "annotations": []}]})
            for call in message.get("tool_calls") or ():
                items.append({"type": "function_call", "id": f"fc_{call['id']}", "call_id": call["id"],
                              "name": call["function"]["name"], "arguments": call["function"]["arguments"],
                              "status": "completed"})
        elif role == "tool":
            items.append({"type": "function_call_output", "call_id": message["tool_call_id"],
                          "output": _text(message["content"])})
    body = {"model": MODEL, "input": items, "chat_template_kwargs": template_kwargs(options)}
    if request["tools"]:
        body["tools"] = [{"type": "function", "name": t["function"]["name"],
                          "description": t["function"].get("description"),
                          "parameters": t["function"].get("parameters"), "strict": None} for t in request["tools"]]
    return body


def anthropic_request(row: dict) -> dict:
    """The golden render request as an Anthropic Messages request: a leading system message as ``system``,
    thinking / text / tool_use blocks for an assistant turn, tool results as ``tool_result`` blocks of a user
    turn; ``chat_template_kwargs`` is vLLM's extension field."""
    request, options = row["request"], row["options"]
    if options.get("add_generation_prompt") is False:
        raise NotExpressible("add_generation_prompt=False")
    messages = list(request["messages"])
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 16, "chat_template_kwargs": template_kwargs(options)}
    if messages and messages[0]["role"] == "system":
        body["system"] = _text(messages.pop(0)["content"])
    out: list[dict] = []
    for message in messages:
        role = message["role"]
        if role in ("system", "developer"):
            raise NotExpressible(f"a {role} message after the first message")
        if role == "user":
            out.append({"role": "user", "content": _parts(message["content"], "text")})
        elif role == "assistant":
            blocks: list[dict] = []
            if message.get("reasoning_content"):
                blocks.append({"type": "thinking", "thinking": message["reasoning_content"], "signature": "x"})
            if message.get("content"):
                blocks.append({"type": "text", "text": _text(message["content"])})
            for call in message.get("tool_calls") or ():
                blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                               "input": json.loads(call["function"]["arguments"])})
            if not blocks:
                raise NotExpressible("an empty assistant message")
            out.append({"role": "assistant", "content": blocks})
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": message["tool_call_id"],
                     "content": _text(message["content"])}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list) and \
                    out[-1]["content"][-1]["type"] == "tool_result":
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    body["messages"] = out
    if request["tools"]:
        body["tools"] = [{"name": t["function"]["name"], "description": t["function"].get("description"),
                          "input_schema": t["function"].get("parameters") or {"type": "object"}}
                         for t in request["tools"]]
    return body


def template_kwargs(options: dict) -> dict:
    """A golden vector's render options as ``chat_template_kwargs`` (toolwire's option names; the thinking switch
    also under the names the HF templates read)."""
    kwargs = {k: v for k, v in options.items() if k != "add_generation_prompt"}
    if "thinking" in kwargs:
        kwargs["enable_thinking"] = kwargs["thinking"]
    return kwargs


def chat_request(row: dict) -> dict:
    """The golden render request as a Chat Completions render request."""
    request, options = row["request"], row["options"]
    body = {"model": MODEL, "messages": request["messages"], "chat_template_kwargs": template_kwargs(options)}
    if request["tools"]:
        body["tools"] = request["tools"]
    if "add_generation_prompt" in options:
        body["add_generation_prompt"] = options["add_generation_prompt"]
    return body
