#!/usr/bin/env python3
"""fleet/kubernetes/coldstart-daemonset.yaml without a cluster (none here):
the manifest parses, selects the labelled amd64 nodes, mounts /dev/kvm,
the results and the textfile directory from the node, and its container's
script, run here with the manifest's environment pointed at scratch
directories, writes a valid suite result (and, with a coldstart that has
`export`, the metrics file).
Usage: test_kubernetes.py COLDSTART SOURCE-DIR WORK-DIR"""
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

coldstart, src, work = sys.argv[1:4]
failed = 0
passed = 0


def check(cond, what):
    global failed, passed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


with open(os.path.join(src, "fleet/kubernetes/coldstart-daemonset.yaml")) as f:
    docs = [d for d in yaml.safe_load_all(f) if d]
kinds = [d["kind"] for d in docs]
check(kinds == ["Namespace", "DaemonSet"], f"kinds {kinds}")
ds = docs[kinds.index("DaemonSet")]
check(ds["apiVersion"] == "apps/v1", "DaemonSet apiVersion")
spec = ds["spec"]
pod = spec["template"]["spec"]
labels = spec["template"]["metadata"]["labels"]
check(all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items()),
      "the selector does not match the pod's labels")
check(ds["metadata"]["namespace"] == docs[0]["metadata"]["name"], "namespace")
check(pod["nodeSelector"] == {"kubernetes.io/arch": "amd64", "coldstart/kvm": "true"},
      f"nodeSelector {pod['nodeSelector']}")

(c,) = pod["containers"]
check(c["securityContext"]["privileged"] is True, "the container is not privileged")
volumes = {v["name"]: v for v in pod["volumes"]}
mounts = {m["mountPath"]: volumes[m["name"]] for m in c["volumeMounts"]}
env = {e["name"]: e["value"] for e in c["env"]}


def host_path(mount, kind):
    v = mounts.get(mount, {})
    return v.get("hostPath", {}).get("type") == kind and v["hostPath"]["path"]


check(host_path("/dev/kvm", "CharDevice") == "/dev/kvm", "/dev/kvm is not the node's")
for var in ("COLDSTART_RESULTS", "COLDSTART_TEXTFILE_DIR"):
    check(bool(host_path(env.get(var), "DirectoryOrCreate")),
          f"{var}={env.get(var)} is not a mounted node directory")
check("emptyDir" in mounts.get("/var/tmp", {}) and
      mounts["/var/tmp"]["emptyDir"].get("medium") != "Memory",
      "/var/tmp (the restore driver's snapshots) is not on the node's disk")
check(int(env["COLDSTART_INTERVAL"]) > 0, "COLDSTART_INTERVAL")
check(c["command"] == ["/bin/sh", "-c"] and len(c["args"]) == 1, "command")
script = c["args"][0]
check(re.search(r'coldstart bench suite \$COLDSTART_SUITE_ARGS --no-emulate --out "\$run"', script),
      "the script does not run the suite into $run")
check(re.search(r'coldstart export prometheus "\$run" --textfile-dir "\$COLDSTART_TEXTFILE_DIR"', script),
      "the script does not export $run into the textfile directory")

# The image is the one Containerfile builds, at this version.
version = subprocess.run([coldstart, "--version"], capture_output=True,
                         text=True, check=True).stdout.split()[1]
check(c["image"].endswith("/coldstart:" + version), f"image {c['image']} (version {version})")
with open(os.path.join(src, "fleet/kubernetes/Containerfile")) as f:
    containerfile = f.read()
check("apt-get install" in containerfile and "/tmp/coldstart_*.deb" in containerfile and
      'ENTRYPOINT ["coldstart"]' in containerfile, "Containerfile")

# The script itself, here: the manifest's environment with the node's
# directories replaced by scratch ones, a smoke run of one driver, one
# round (COLDSTART_INTERVAL=0), and a stand-in for its final `sleep`.
shutil.rmtree(work, ignore_errors=True)
shim = os.path.join(work, "bin")
os.makedirs(shim)
os.symlink(os.path.abspath(coldstart), os.path.join(shim, "coldstart"))
with open(os.path.join(shim, "sleep"), "w") as f:
    f.write("#!/bin/sh\necho \"sleep $*\" >> \"$SLEPT\"\n")
os.chmod(os.path.join(shim, "sleep"), 0o755)
run_env = dict(os.environ)
run_env.update(env)
run_env.update(COLDSTART_INTERVAL="0",
               COLDSTART_SUITE_ARGS="--smoke --only lifecycle",
               COLDSTART_RESULTS=os.path.join(work, "results"),
               COLDSTART_TEXTFILE_DIR=os.path.join(work, "textfile"),
               SLEPT=os.path.join(work, "slept"),
               PATH=shim + ":" + os.environ["PATH"])
os.makedirs(run_env["COLDSTART_TEXTFILE_DIR"])
p = subprocess.run(c["command"] + [script], env=run_env, capture_output=True,
                   text=True, timeout=300, cwd=work)
print(p.stderr[-2000:], end="")
check(p.returncode == 0, f"the script exited {p.returncode}")
check(open(run_env["SLEPT"]).read() == "sleep infinity\n" if os.path.exists(run_env["SLEPT"])
      else False, "with COLDSTART_INTERVAL=0 the script does not idle after one round")
runs = os.listdir(run_env["COLDSTART_RESULTS"]) if os.path.isdir(run_env["COLDSTART_RESULTS"]) else []
check(len(runs) == 1 and re.fullmatch(r"\d{8}-\d{6}", runs[0]), f"result directories {runs}")
if runs:
    with open(os.path.join(run_env["COLDSTART_RESULTS"], runs[0], "suite.json")) as f:
        d = json.load(f)
    check(d["bench"] == "suite" and [x["name"] for x in d["drivers"]] == ["lifecycle"] and
          d["drivers"][0]["status"] in ("ok", "skipped"), "suite.json")
    check(d["drivers"][0]["status"] == "ok" or not d["sysinfo"]["kvm"]["usable"],
          "lifecycle skipped on a host with KVM")
commands = subprocess.run([coldstart, "help", "--commands"], capture_output=True,
                          text=True, check=True).stdout.split()
prom = os.path.join(run_env["COLDSTART_TEXTFILE_DIR"], "coldstart.prom")
if "export" in commands:
    check(os.path.exists(prom) and "coldstart_" in open(prom).read(),
          "no metrics in the textfile directory")
else:
    print("this coldstart has no 'export' command: the metrics file is not checked")
    check("exporting" in p.stderr and not os.path.exists(prom),
          "a failed export is not reported, or left a file")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
