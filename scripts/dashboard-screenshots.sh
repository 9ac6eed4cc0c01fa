#!/usr/bin/env bash
# Takes the landing-page screenshots of docs/dashboard.md again: builds the
# dashboard, runs the browser test (web/e2e/run.mjs through
# TestDashboardEndToEnd), which writes web/e2e/artifacts/landing-<role>.png
# at 1440x900, and copies them to docs/img/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
make web
rm -f web/e2e/artifacts/landing-*.png
go test ./cmd/sluice -run TestDashboardEndToEnd -count=1
shopt -s nullglob
shots=(web/e2e/artifacts/landing-*.png)
if [ ${#shots[@]} -eq 0 ]; then
  echo "no landing-*.png in web/e2e/artifacts: did the browser test run (Chromium, web/node_modules)?" >&2
  exit 1
fi
cp "${shots[@]}" docs/img/
ls -l docs/img/landing-*.png
