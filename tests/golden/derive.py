# derive.py REF NEW: a second results directory made from REF by fixed
# changes (no randomness), so that `compare REF NEW` has verdicts to give:
# every restore sample 7 % slower, every lifecycle sample 5 % faster, the
# rate and peers documents left out (missing in NEW).
import json, os, shutil, sys

ref, new = sys.argv[1], sys.argv[2]
os.makedirs(new, exist_ok=True)
scale = {"restore.json": 1.07, "lifecycle.json": 0.95}
for name in sorted(os.listdir(ref)):
    if not name.endswith(".json") or name in ("rate.json", "peers.json"):
        continue
    with open(os.path.join(ref, name)) as f:
        doc = json.load(f)
    k = scale.get(name)
    if k:
        for s in doc.get("series", []):
            if "samples_ns" in s:
                s["samples_ns"] = [int(v * k) for v in s["samples_ns"]]
    with open(os.path.join(new, name), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
