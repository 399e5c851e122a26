"""Serves a saved generator (`Generator.save`) from several worker
processes with Ray Serve (docs/python.md, "Serving from several workers").

    pip install "ray[serve]==2.60.0"
    python examples/serving/serve_generator.py llama-pkg --replicas 2 --port 8000
    curl -s localhost:8000/ -d '{"input_ids": [[5, 17, 42, 9]], "max_new_tokens": 8}'

Each replica is a process of its own that loads the package with
`attnfuse.load` (weights mapped, no model code, torch.export or
transformers) and runs one request at a time (its KV cache is the
generator's); Ray Serve's proxy spreads the requests over the replicas. A
request is JSON: `input_ids` ([B, T] token ids), optionally
`attention_mask` (left padding as 0) and the options of
`Generator.generate` (`max_new_tokens`, `do_sample`, `temperature`,
`top_k`, `top_p`, `repetition_penalty`, `seed`); the answer is
`{"tokens": [B, T + new], "replica": pid}`.
"""

from __future__ import annotations

import argparse
import asyncio
import os

import torch
from ray import serve

import attnfuse

OPTIONS = ("max_new_tokens", "do_sample", "temperature", "top_k", "top_p",
           "repetition_penalty", "seed")


@serve.deployment(max_ongoing_requests=1)
class GeneratorServer:
    """One worker process: the package loaded once, one request at a time."""

    def __init__(self, package: str):
        self.generator = attnfuse.load(package)

    async def __call__(self, request):
        body = await request.json()
        ids = torch.tensor(body["input_ids"], dtype=torch.int64)
        mask = body.get("attention_mask")
        mask = (torch.ones_like(ids) if mask is None
                else torch.tensor(mask, dtype=torch.int64))
        options = {k: body[k] for k in OPTIONS if k in body}
        # Off the event loop, which answers Ray's health checks meanwhile.
        tokens = await asyncio.to_thread(
            self.generator.generate, ids, attention_mask=mask, **options)
        return {"tokens": tokens.tolist(), "replica": os.getpid()}


def app(package: str, replicas: int):
    """The Serve application: `replicas` processes serving `package`."""
    return GeneratorServer.options(num_replicas=replicas).bind(
        os.path.abspath(package))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("package", help="a directory from Generator.save")
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--port", type=int, default=8000)
    a = p.parse_args(argv)
    serve.start(http_options={"host": "127.0.0.1", "port": a.port})
    serve.run(app(a.package, a.replicas), route_prefix="/", blocking=True)


if __name__ == "__main__":
    main()
