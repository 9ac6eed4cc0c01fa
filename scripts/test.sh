#!/usr/bin/env bash
# test.sh — what `make test` runs, locally and in CI (.ci/run).
#
# Makes PostgreSQL and Redis available (scripts/ensure-services.sh: a fresh
# database for this run, dropped at exit), then runs the gofmt check, go vet
# and the whole module's tests with the race detector. All three steps run
# even when one fails, so that one run shows every problem; the exit status
# is non-zero when any failed. Under CI=true a missing service is a failure.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ -x /usr/local/go/bin/go ]]; then
	export PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null || { echo "test.sh: go not found (expected /usr/local/go/bin/go)" >&2; exit 1; }
echo "test.sh: $(go version)${CI:+ (CI=$CI)}"

# shellcheck source=scripts/ensure-services.sh
source scripts/ensure-services.sh
ensure_services

# The race detector needs cgo and a C compiler.
race=(-race)
if [[ "$(go env CGO_ENABLED)" != "1" ]] || ! command -v "$(go env CC)" >/dev/null; then
	_svc_apt_install gcc libc6-dev >/dev/null 2>&1 || true
	if [[ "$(go env CGO_ENABLED)" == "1" ]] && command -v "$(go env CC)" >/dev/null; then
		:
	elif [[ "${CI:-}" == "true" ]]; then
		echo "test.sh: the race detector needs cgo and a C compiler (gcc)" >&2
		exit 1
	else
		echo "test.sh: WARNING: no C compiler; running the tests without -race" >&2
		race=()
	fi
fi

failed=()

# The end-to-end test drives Sluice with the official openai npm client.
if command -v npm >/dev/null; then
	echo "test.sh: npm ci (internal/e2e/node)"
	(cd internal/e2e/node && npm ci --no-audit --no-fund --loglevel=error) || failed+=(npm)
elif [[ "${CI:-}" == "true" ]]; then
	echo "test.sh: npm (Node.js) is required for the end-to-end tests" >&2
	exit 1
fi

# The dashboard (web/): Debian's Chromium for its browser test
# (cmd/sluice/dashboard_e2e_test.go), then npm ci, the build into web/dist
# (embedded by the Go test build of cmd/sluice, so it comes first) and the
# unit tests (vitest).
if [[ ! -x /usr/bin/chromium ]]; then
	_svc_apt_install chromium || true
	if [[ ! -x /usr/bin/chromium && "${CI:-}" == "true" ]]; then
		echo "test.sh: Chromium (Debian's chromium package) is required for the dashboard's end-to-end test" >&2
		exit 1
	fi
fi
if command -v npm >/dev/null; then
	echo "test.sh: npm ci, npm run build, npm test (web)"
	(cd web && npm ci --no-audit --no-fund --loglevel=error && npm run build && npm test) || failed+=(web)
fi

# The container image test (cmd/sluice TestContainerImage) builds with
# buildah or podman: Debian's buildah when neither is installed (about 40 s);
# without it the test is skipped with the reason.
if ! command -v buildah >/dev/null && ! command -v podman >/dev/null; then
	_svc_apt_install buildah >/dev/null 2>&1 || echo "test.sh: buildah could not be installed; the image test will be skipped" >&2
fi

echo "test.sh: gofmt"
# Tracked and untracked (not ignored) Go files, without vendor/; a tracked file
# deleted in the work tree is skipped. Outside a git checkout: every file.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	list_go() { git ls-files -z --cached --others --exclude-standard -- '*.go'; }
else
	list_go() { find . -name '*.go' -not -path './.git/*' -print0; }
fi
unformatted=$(list_go | while IFS= read -r -d '' f; do
	[[ "$f" == vendor/* || "$f" == ./vendor/* || ! -f "$f" ]] || printf '%s\0' "$f"
done | xargs -0 -r gofmt -l)
if [[ -n "$unformatted" ]]; then
	echo "test.sh: not gofmt-ed (run gofmt -w):" >&2
	sed 's/^/  /' <<<"$unformatted" >&2
	failed+=(gofmt)
fi

echo "test.sh: go vet ./..."
go vet ./... || failed+=(vet)

echo "test.sh: go test ${race[*]} -count=1 -timeout 20m ./..."
go test "${race[@]}" -count=1 -timeout 20m ./... || failed+=(test)

pg=${SLUICE_TEST_POSTGRES_URL:+ok}
redis=${SLUICE_TEST_REDIS_URL:+ok}
services="postgres=${pg:-missing} redis=${redis:-missing}"
if ((${#failed[@]})); then
	echo "test.sh: FAIL (${failed[*]}); services: $services"
	exit 1
fi
echo "test.sh: PASS (gofmt, vet, tests${race:+ with -race}); services: $services"
