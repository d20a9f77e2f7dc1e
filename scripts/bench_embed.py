"""Python onnxruntime + tokenizers on the same texts, model, threads, batching and truncation
as benches/embed.rs. Prints one JSON line. Used by scripts/bench-embed.sh."""
import json, sys, time
import numpy as np, onnxruntime as ort, tokenizers

corpus, model_dir, threads, batch, max_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
texts = [json.loads(l).get("text", "") for l in open(corpus) if l.strip()]
tok = tokenizers.Tokenizer.from_file(f"{model_dir}/tokenizer.json")
tok.no_padding(); tok.enable_truncation(max_tokens)
so = ort.SessionOptions(); so.intra_op_num_threads = threads
t = time.time()
sess = ort.InferenceSession(f"{model_dir}/model.onnx", so, providers=["CPUExecutionProvider"])
load = time.time() - t
types = any(i.name == "token_type_ids" for i in sess.get_inputs())
order = sorted(texts, key=len)
t0 = time.time()
out = []
for b in range(0, len(order), batch):
    enc = tok.encode_batch(order[b:b + batch])
    w = max(len(e.ids) for e in enc)
    ids = np.zeros((len(enc), w), np.int64); mask = np.zeros_like(ids)
    for r, e in enumerate(enc):
        ids[r, :len(e.ids)] = e.ids; mask[r, :len(e.ids)] = e.attention_mask
    feeds = {"input_ids": ids, "attention_mask": mask}
    if types: feeds["token_type_ids"] = np.zeros_like(ids)
    h = sess.run(None, feeds)[0]
    v = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    out.extend(v / np.linalg.norm(v, axis=1, keepdims=True))
s = time.time() - t0
assert len(out) == len(texts)
print(json.dumps({"impl": "python", "docs": len(texts), "seconds": round(s, 3), "docs_per_s": round(len(texts) / s, 2), "load_s": round(load, 3)}))
