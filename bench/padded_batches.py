"""Padded Hugging Face batches, two AttnFuse builds in one process (issue
51's "before and after"): a batch at about 50% padding against the same
batch with every row full ("fully padded": the same shapes, no padding to
skip), each build's library compiled once and called on both.

  python3 bench/padded_batches.py --a /work/main/build --b build \\
      --case bert bert-attention llama-prefill llama-attention \\
      --dtype f32 bf16 --threads 2

Cases (random weights from configs, sdpa attention, batch `--batch`):

- bert: BertModel with BERT-base's config (12 layers, hidden 768, 12
  heads), `--seq` tokens, right padding (the tokenizer's);
- bert-attention: F.scaled_dot_product_attention alone at BERT-base's
  shapes ([B, 12, S, 64]) with the [B, 1, 1, S] boolean padding mask that
  transformers builds;
- llama-prefill: attnfuse.compile_generator's prefill step of a Llama of
  bench/generate.py's "0.5b" shapes (hidden 1024, 16 heads, 4 KV heads,
  intermediate 5632, vocabulary 32000; `--layers` of its 24 layers), left
  padding (the generator's prompts);
- llama-attention: the attention alone at those shapes (causal, GQA, the
  left-padding mask);
- bert-skip: the same BertModel without its pooler, compiled twice on
  `--b`'s build: A by default (every padded position computed, as eager
  computes it), B with `skip_padding=True` (the real tokens only, packed
  back to back; padded positions return 0). Its check compares the real
  tokens;
- llama-generate: the same generator's `generate(max_new_tokens=1)`, its
  prompt (the prefill and the first token): A with `skip_padding = False`
  (one prefill of every padded position), B with the default (one prefill
  per left-padded row on its own tokens); both on `--b`'s build, compiled
  once. Its check compares the token with eager's argmax.

The lengths are `--lengths` (fractions of `--seq`; the default's mean is
0.5). Each build (ATTN_BUILD_DIR at compile time) compiles each case once;
then `--rounds` rounds time each (build, batch) pair in turn (about 0.5 s
of calls each), the order reversed every other round, and the median of
each pair's rounds counts.
Prints per build the padded and full times and padded / full; checks the
padded batch's output against eager PyTorch. Record `uptime` beside it.
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--a", required=True, help="build dir before")
    p.add_argument("--b", required=True, help="build dir after")
    p.add_argument("--case", nargs="+", default=["bert", "bert-attention",
                                                  "llama-prefill",
                                                  "llama-attention",
                                                  "llama-generate"])
    p.add_argument("--dtype", nargs="+", default=["f32", "bf16"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--lengths", type=float, nargs="+",
                   default=[1.0, 0.2, 0.7, 0.3, 0.55, 0.1, 0.8, 0.35])
    p.add_argument("--rounds", type=int, default=5)
    return p.parse_args()


args = parse()
os.environ["OMP_NUM_THREADS"] = str(args.threads)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import transformers as T  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
import attnfuse  # noqa: E402

torch.set_num_threads(args.threads)
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def lengths():
    n = [max(1, round(f * args.seq)) for f in args.lengths]
    return (n * args.batch)[:args.batch]


def padding(left):
    """[B, S] attention masks (1 = token): the mixed batch, and the full
    one."""
    mask = torch.zeros(args.batch, args.seq, dtype=torch.long)
    for row, n in enumerate(lengths()):
        if left:
            mask[row, args.seq - n:] = 1
        else:
            mask[row, :n] = 1
    return mask, torch.ones_like(mask)


class Attention(nn.Module):
    """transformers' sdpa attention on given q, k, v: the padding mask
    and, for a decoder, the causal band (which the exporter turns into
    is_causal), as its mask functions build them."""

    def __init__(self, causal, groups):
        super().__init__()
        self.causal, self.groups = causal, groups

    def forward(self, q, k, v, mask):
        keep = mask.bool()[:, None, None, :]
        if self.causal:
            s = q.shape[-2]
            keep = keep & torch.ones(s, s, dtype=torch.bool,
                                     device=q.device).tril()
        k = k.repeat_interleave(self.groups, dim=1)
        v = v.repeat_interleave(self.groups, dim=1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=keep)


def llama_model(dtype):
    torch.manual_seed(0)
    return T.LlamaForCausalLM(T.LlamaConfig(
        vocab_size=32000, hidden_size=1024, num_hidden_layers=args.layers,
        num_attention_heads=16, num_key_value_heads=4,
        intermediate_size=5632, max_position_embeddings=4096,
        attn_implementation="sdpa", tie_word_embeddings=False)).eval().to(
            dtype)


def setup(case, dtype):
    """(compile(): a callable on one batch, the batches {padded, full},
    eager(batch) for the check)."""
    g = torch.Generator().manual_seed(0)
    left = case.startswith("llama")
    padded, full = padding(left)
    if case in ("bert", "bert-skip"):
        torch.manual_seed(0)
        model = T.BertModel(T.BertConfig(attn_implementation="sdpa"),
                            add_pooling_layer=case == "bert").eval().to(
                                dtype)
        ids = torch.randint(1000, 30000, (args.batch, args.seq), generator=g)
        batches = {"padded": ((ids,), {"attention_mask": padded}),
                   "full": ((ids,), {"attention_mask": full})}

        def build(tag):
            skip = case == "bert-skip" and tag == "B"
            lib = attnfuse.compile(model, (ids,),
                                   example_kwargs={"attention_mask": padded},
                                   prepack_weights=True, skip_padding=skip)
            return lambda x: lib(*x[0], **x[1]).last_hidden_state

        def eager(x):
            return model(*x[0], **x[1]).last_hidden_state
        return build, batches, eager
    if case.endswith("attention"):
        heads, kv = (12, 12) if case == "bert-attention" else (16, 4)
        model = Attention(left, heads // kv)
        q = torch.randn(args.batch, heads, args.seq, 64, generator=g)
        k, v = (torch.randn(args.batch, kv, args.seq, 64, generator=g)
                for _ in range(2))
        q, k, v = (t.to(dtype) for t in (q, k, v))
        batches = {name: ((q, k, v, m), {})
                   for name, m in (("padded", padded), ("full", full))}

        def build(tag):
            lib = attnfuse.compile(model, (q, k, v, padded))
            return lambda x: lib(*x[0])

        return build, batches, lambda x: model(*x[0])
    model = llama_model(dtype)
    ids = torch.randint(3, 32000, (args.batch, args.seq), generator=g)

    def positions(mask):
        return (mask.cumsum(-1) - 1).clamp(min=0)
    batches = {name: ((ids, m, positions(m)), {})
               for name, m in (("padded", padded), ("full", full))}

    if case == "llama-generate":
        compiled = []

        def build(tag):
            if not compiled:
                compiled.append(attnfuse.compile_generator(
                    model, max_batch=args.batch, max_cache_len=args.seq + 1,
                    prepack_weights=True))
            gen = compiled[0]
            skip = "auto" if tag == "B" else False

            def first_token(x):
                gen.skip_padding = skip
                ids, mask, _ = x[0]
                return gen.generate(ids, attention_mask=mask,
                                    max_new_tokens=1)[:, -1]
            return first_token

        def eager(x):
            ids, mask, pos = x[0]
            return model(ids, attention_mask=mask,
                         position_ids=pos).logits[:, -1].argmax(-1)
        return build, batches, eager

    def build(tag):
        gen = attnfuse.compile_generator(model, max_batch=args.batch,
                                         max_cache_len=args.seq,
                                         prepack_weights=True)
        return lambda x: gen.prefill(*x[0])

    def eager(x):
        ids, mask, pos = x[0]
        return model(ids, attention_mask=mask,
                     position_ids=pos).logits[:, -1]
    return build, batches, eager


def main():
    n = lengths()
    print(f"# batch {args.batch}, {args.seq} tokens, lengths {n} "
          f"(padding {1 - sum(n) / (args.batch * args.seq):.1%}), "
          f"{args.threads} threads; builds A={args.a} B={args.b}")
    for case in args.case:
        # llama-generate's and bert-skip's A and B are two ways of
        # compiling or calling B's build.
        same = case in ("llama-generate", "bert-skip")
        paths = {"A": args.b if same else args.a, "B": args.b}
        for dname in args.dtype:
            dtype = DTYPES[dname]
            build, batches, eager = setup(case, dtype)
            with torch.no_grad():
                want = eager(batches["padded"]).float()
            calls = {}
            for tag, path in paths.items():
                os.environ["ATTN_BUILD_DIR"] = str(Path(path).resolve())
                t = time.perf_counter()
                fn = build(tag)
                compile_s = time.perf_counter() - t
                got, ref = fn(batches["padded"]).float(), want
                if case == "bert-skip":  # the real tokens
                    keep = batches["padded"][1]["attention_mask"].bool()
                    got, ref = got[keep], want[keep]
                err = (got - ref).abs().max().item()
                print(f"# {case} {dname} build {tag}: compile "
                      f"{compile_s:.0f} s, max |padded - eager| {err:.2e}")
                for name, x in batches.items():
                    calls[(tag, name)] = (fn, x)
            times = {key: [] for key in calls}
            order = list(calls)
            with torch.no_grad():
                for fn, x in calls.values():
                    fn(x)
                fn, x = calls[("A", "full")]
                t = time.perf_counter()
                fn(x)
                repeat = max(1, round(0.5 / (time.perf_counter() - t)))
                for r in range(args.rounds):
                    for key in order if r % 2 == 0 else order[::-1]:
                        fn, x = calls[key]
                        t = time.perf_counter()
                        for _ in range(repeat):
                            fn(x)
                        times[key].append((time.perf_counter() - t) / repeat)
            med = {key: statistics.median(v) * 1e3
                   for key, v in times.items()}
            for tag in ("A", "B"):
                p, f = med[(tag, "padded")], med[(tag, "full")]
                print(f"{case:16} {dname:5} {tag}  padded {p:9.2f} ms  "
                      f"full {f:9.2f} ms  padded/full {p / f:.2f}")
            print(f"{case:16} {dname:5} B/A padded "
                  f"{med[('B', 'padded')] / med[('A', 'padded')]:.2f}, "
                  f"full {med[('B', 'full')] / med[('A', 'full')]:.2f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
