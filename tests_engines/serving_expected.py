"""How vLLM's own renderer and parsers differ from toolwire on the golden vectors, through the server
(test_vllm_serving_own.py), per family: class -> count. docs/engines.md explains each class."""

OWN_RENDER: dict[str, dict[str, int]] = {}
OWN_DERENDER: dict[str, dict[str, int]] = {}
OWN_FAIL_CLOSED: dict[str, dict] = {}
