"""examples/serving/serve_generator.py: a saved generator served by Ray
Serve from two worker processes, each request's tokens equal to the
generator's own. Outside CI (Ray's install and start take a minute):

    pip install "ray[serve]==2.60.0"
    ATTNFUSE_TEST_SERVING=1 scripts/test-python.sh   # or pytest tests/test_serving.py
"""

import json
import os
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

import attnfuse

if os.environ.get("ATTNFUSE_TEST_SERVING") != "1":
    pytest.skip("serving: set ATTNFUSE_TEST_SERVING=1 (needs ray[serve])",
                allow_module_level=True)
ray = pytest.importorskip("ray")
serve = pytest.importorskip("ray.serve")
transformers = pytest.importorskip("transformers")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "serving"
PORT = 18731


def _post(body):
    request = urllib.request.Request(
        f"http://127.0.0.1:{PORT}/", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def test_two_replicas_serve_the_generators_tokens(tmp_path):
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=100, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
        max_position_embeddings=64)).eval()
    generator = attnfuse.compile_generator(model, max_batch=2,
                                           max_cache_len=32)
    g = torch.Generator().manual_seed(1)
    prompts = [torch.randint(3, 100, (1 + i % 2, 3 + i), generator=g)
               for i in range(8)]
    expected = [generator.generate(ids, max_new_tokens=6, do_sample=False)
                for ids in prompts]
    package = generator.save(tmp_path / "pkg")

    sys.path.insert(0, str(EXAMPLES))
    import serve_generator

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": PORT})
        serve.run(serve_generator.app(str(package), 2), route_prefix="/")
        bodies = [{"input_ids": ids.tolist(), "max_new_tokens": 6,
                   "do_sample": False} for ids in prompts]
        # Four at a time: a replica takes one request at a time, so both
        # must serve.
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(_post, bodies))
    finally:
        serve.shutdown()
        ray.shutdown()
    for answer, tokens in zip(answers, expected):
        assert answer["tokens"] == tokens.tolist()
    assert len({a["replica"] for a in answers}) == 2
