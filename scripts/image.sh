#!/usr/bin/env bash
# image.sh — what `make image` runs: Sluice's container image from scratch.
#
#   IMAGE=localhost/sluice:dev scripts/image.sh
#
# Builds the static binary (CGO_ENABLED=0; the SQLite driver is pure Go),
# stages a build context with it, the build host's CA certificates, passwd
# and group files for the user sluice (65532) and empty /data and /tmp
# directories, then builds deploy/Containerfile with buildah or podman,
# whichever is installed (BUILDER=buildah|podman picks one). No base image
# is pulled. Prints the image name on its last line.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ -x /usr/local/go/bin/go ]]; then
	export PATH="/usr/local/go/bin:$PATH"
fi

version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
image=${IMAGE:-localhost/sluice:$version}
certs=${CA_CERTIFICATES:-/etc/ssl/certs/ca-certificates.crt}

builder=${BUILDER:-}
if [[ -z "$builder" ]]; then
	for b in buildah podman; do
		if command -v "$b" >/dev/null; then
			builder=$b
			break
		fi
	done
fi
if [[ -z "$builder" ]]; then
	echo "image.sh: neither buildah nor podman is installed; on Debian or Ubuntu: sudo apt-get install buildah (or podman)" >&2
	exit 1
fi
if [[ ! -r "$certs" ]]; then
	echo "image.sh: no CA certificates at $certs (Debian: apt-get install ca-certificates; or set CA_CERTIFICATES)" >&2
	exit 1
fi

ctx=$(mktemp -d "${TMPDIR:-/tmp}/sluice-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT

echo "image.sh: go build (CGO_ENABLED=0, version $version)" >&2
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$ctx/sluice" ./cmd/sluice
cp "$certs" "$ctx/ca-certificates.crt"
cat >"$ctx/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
sluice:x:65532:65532:sluice:/data:/sbin/nologin
PASSWD
cat >"$ctx/group" <<'GROUP'
root:x:0:
sluice:x:65532:
GROUP
mkdir -p "$ctx/data" "$ctx/tmp"
chmod 0750 "$ctx/data"
chmod 1777 "$ctx/tmp"

echo "image.sh: $builder build -t $image" >&2
case "$builder" in
buildah)
	buildah ${BUILDAH_FLAGS:-} bud --layers=false -f deploy/Containerfile -t "$image" "$ctx" >&2
	;;
podman)
	podman ${PODMAN_FLAGS:-} build -f deploy/Containerfile -t "$image" "$ctx" >&2
	;;
*)
	echo "image.sh: BUILDER must be buildah or podman, got $builder" >&2
	exit 1
	;;
esac
echo "$image"
