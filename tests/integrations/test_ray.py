"""Ray Data on a local Ray cluster (``ray.init()`` on this machine): the batch mappers through
``map_batches`` give, row for row, what the format's own parse and render give."""

from __future__ import annotations

import json

import pytest

import toolwire
from toolwire.batch import BatchParser, BatchRenderer, row_status

from support import golden, require_shared

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    for attempt in range(3):  # Ray's one start-up wait it lets no one configure (30 s for the raylet to register)
        try:                  # is retried, not a verdict: on a loaded machine the cluster is slow, not broken
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True,
                     configure_logging=False)
            break
        except Exception as exc:  # noqa: BLE001 - only that timeout is retried
            ray.shutdown()
            if "timed out during startup" not in str(exc) or attempt == 2:
                raise
    yield
    ray.shutdown()


def test_ray_parse_on_a_local_cluster(cluster):
    from toolwire.integrations.ray import ray_parse

    require_shared()
    rows = [r for r in golden("parse", "qwen35") if r["tools"] == golden("parse", "qwen35")[0]["tools"]]
    records = [{"id": r["id"], "model_output": r["model_output"],
                "thinking": bool(r.get("prompt_opens_reasoning", r["options"]["thinking"]))} for r in rows]
    records.append({"id": "empty", "model_output": "", "thinking": False})
    ds = ray.data.from_items(records, override_num_blocks=4)
    out = {row["id"]: row for row in ray_parse(ds, BatchParser("qwen35", tools=rows[0]["tools"]), batch_size=5)
           .take_all()}
    assert set(out) == {r["id"] for r in records}
    fmt = toolwire.get_format("qwen35")
    for r in records:
        expected = fmt.parse(r["model_output"], rows[0]["tools"], thinking=r["thinking"]).validate(rows[0]["tools"])
        got = out[r["id"]]
        assert (got["content"], got["reasoning"], got["status"]) == (expected.content, expected.reasoning,
                                                                      row_status(expected))
        assert [(c["name"], json.loads(c["arguments"])) for c in got["tool_calls"]] == \
               [(c.name, c.arguments) for c in expected.tool_calls]


def test_ray_render_on_a_local_cluster(cluster):
    from toolwire.integrations.ray import ray_render

    require_shared()
    rows = [r for r in golden("render", "glm47") if not r["request"].get("tools") and r["options"] == {}]
    ds = ray.data.from_items([{"i": i, "messages": json.dumps(r["request"]["messages"])} for i, r in enumerate(rows)])
    got = sorted(ray_render(ds, BatchRenderer("glm47")).take_all(), key=lambda row: row["i"])
    for row, r in zip(got, rows):
        if "expected_error" in r:
            assert row["prompt"] is None and row["error"]
        else:
            assert row["prompt"] == r["expected"]
