#!/bin/bash
# `coldstart image build` as a black box: usage errors, missing tools, a
# real build from the apt archive (manifest hashes, initramfs contents),
# the cache, --force, and refusing to replace a directory it did not make.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT

expect 0 'Usage: coldstart image build' image --help
expect 0 'Usage: coldstart image build' image build --help
expect 2 "expected the subcommand 'build'" image
expect 2 "expected the subcommand 'build'" image frobnicate
expect 2 "unexpected argument 'extra'" image build extra
expect 2 'Try .coldstart image --help' image build --bogus
expect 2 '--out is empty' image build --out ''

# A missing tool names the Debian package to install.
code=0
env PATH=/nonexistent "$COLDSTART" image build --out "$tmp/none" >"$out" 2>"$err" || code=$?
if [ $code -eq 1 ] && grep -q "'apt-get' not found: install the Debian package apt" "$err" &&
	[ ! -e "$tmp/none" ]; then
	pass=$((pass + 1))
else
	echo "FAIL: image build without apt-get in PATH: exit $code"
	sed 's/^/  | /' "$err" | head -3
	failed=$((failed + 1))
fi

expect 1 "kernel package 'linux-image-no-such-kernel' is not in the apt archive" \
	image build --kernel-package linux-image-no-such-kernel --out "$tmp/x"
mkdir "$tmp/mine" && echo keep >"$tmp/mine/file"
expect 1 'refusing to replace .*/mine: it is not a coldstart image directory' \
	image build --out "$tmp/mine"
[ "$(cat "$tmp/mine/file")" = keep ] && pass=$((pass + 1)) ||
	{ echo "FAIL: a refused --out directory was modified"; failed=$((failed + 1)); }

# A real build: stdout is the directory, the manifest hashes the files.
img=$tmp/img
expect 0 '' image build --out "$img"
[ "$(cat "$out")" = "$img" ] && pass=$((pass + 1)) ||
	{ echo "FAIL: stdout is '$(cat "$out")', not $img"; failed=$((failed + 1)); }
m=$img/manifest.json
json_check 'd["schema"] == "coldstart-image/3"' "$m"
json_check 'd["kernel"]["package"].startswith("linux-image-") and d["kernel"]["version"]' "$m"
for f in vmlinuz initramfs.cpio.gz; do
	sum=$(sha256sum "$img/$f" | cut -d' ' -f1)
	size=$(stat -c %s "$img/$f")
	json_check "any(e.get('file') == '$f' and e['sha256'] == '$sum' and e['size'] == $size for e in (d['kernel'], d['initramfs']))" "$m"
done
json_check 'd["busybox"]["sha256"] and d["busybox"]["applets"] > 50' "$m"
json_check 'len(d["modules"]) == 12 and any(e["file"].endswith("virtiofs.ko") for e in d["modules"]) and all(len(e["sha256"]) == 64 for e in d["modules"])' "$m"
# The bzImage magic, and the initramfs holds init, busybox, applets, console.
[ "$(dd if="$img/vmlinuz" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] && pass=$((pass + 1)) ||
	{ echo "FAIL: vmlinuz is not a bzImage"; failed=$((failed + 1)); }
zcat "$img/initramfs.cpio.gz" | cpio -itv --quiet >"$tmp/list" 2>/dev/null
for want in ' init$' ' bin/busybox$' ' bin/sh -> /bin/busybox$' '^crw.* dev/console$' \
	' bin/coldstart-agent$' ' lib/modules/coldstart/virtio_mmio.ko$' \
	' lib/modules/coldstart/vmw_vsock_virtio_transport.ko$'; do
	grep -Eq -- "$want" "$tmp/list" && pass=$((pass + 1)) ||
		{ echo "FAIL: initramfs lacks /$want/"; failed=$((failed + 1)); }
done
init_sum=$(cd "$tmp" && zcat "$img/initramfs.cpio.gz" | cpio -i --quiet init 2>/dev/null && sha256sum init | cut -d' ' -f1)
json_check "d['init']['sha256'] == '$init_sum'" "$m"
agent_sum=$(cd "$tmp" && zcat "$img/initramfs.cpio.gz" | cpio -i --quiet -d bin/coldstart-agent 2>/dev/null && sha256sum bin/coldstart-agent | cut -d' ' -f1)
json_check "d['agent']['sha256'] == '$agent_sum' and 'rootfs' not in d" "$m"

# Cached: same inputs, nothing rebuilt; --force rebuilds in place.
before=$(stat -c %Y "$m")
expect 0 'is up to date' image build --out "$img"
[ "$(stat -c %Y "$m")" = "$before" ] && pass=$((pass + 1)) ||
	{ echo "FAIL: a cached image was rewritten"; failed=$((failed + 1)); }
expect 0 "built $img" image build --out "$img" --force
json_check 'd["schema"] == "coldstart-image/3"' "$m"
expect 0 '"schema": "coldstart-image/3"' image build --out "$img" --json
[ -z "$(ls -A "$tmp" | grep '\.tmp-')" ] && pass=$((pass + 1)) ||
	{ echo "FAIL: temporary directories left behind"; failed=$((failed + 1)); }
# A corrupted file makes the cache stale: the kernel, or a module the
# e2e host loads from the image.
printf x >>"$img/vmlinuz"
expect 0 "built $img" image build --out "$img"
expect 0 'is up to date' image build --out "$img"
printf x >>"$img/modules/kvm.ko"
expect 0 "built $img" image build --out "$img"
rm "$img/modules/kvm-amd.ko"
expect 0 "built $img" image build --out "$img"
[ -s "$img/modules/kvm-amd.ko" ] && pass=$((pass + 1)) ||
	{ echo "FAIL: a removed module was not rebuilt"; failed=$((failed + 1)); }
finish
