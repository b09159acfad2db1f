#!/usr/bin/env python3
"""Writes a tiny LLaMA-architecture GGUF model for scripts/llama-server-test.sh.

Random weights (seeded, so the file is the same each time), the real LLaMA tokenizer copied from
llama.cpp's own models/ggml-vocab-llama-spm.gguf. Its answers are nonsense; what it is for is a real
llama.cpp server to run the product against. Needs numpy and llama.cpp's gguf-py on PYTHONPATH.

usage: tiny-llama-gguf.py VOCAB.gguf OUT.gguf
"""
import sys

import numpy as np
import gguf

N_EMBD = 64
N_HEAD = 4
N_LAYER = 2
N_FF = 128
N_CTX = 2048


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    vocab_path, out_path = sys.argv[1], sys.argv[2]
    vocab = gguf.GGUFReader(vocab_path)
    writer = gguf.GGUFWriter(out_path, "llama")
    writer.add_name("panoptes-tiny-llama")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    n_vocab = 0
    for name, field in vocab.fields.items():
        if not name.startswith("tokenizer."):
            continue
        value = field.contents()
        if name == "tokenizer.ggml.tokens":
            n_vocab = len(value)
        sub = field.types[1] if len(field.types) > 1 else None
        writer.add_key_value(name, value, field.types[0], sub)
    if n_vocab == 0:
        print(f"{vocab_path} holds no tokenizer.ggml.tokens", file=sys.stderr)
        return 1
    writer.add_vocab_size(n_vocab)
    rng = np.random.default_rng(30)

    def weights(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    writer.add_tensor("token_embd.weight", weights(n_vocab, N_EMBD))
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    writer.add_tensor("output.weight", weights(n_vocab, N_EMBD))
    for i in range(N_LAYER):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"blk.{i}.{t}.weight", weights(N_EMBD, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weights(N_EMBD, N_FF))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"wrote {out_path}: llama, {N_LAYER} layers, {N_EMBD} wide, vocabulary of {n_vocab}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
