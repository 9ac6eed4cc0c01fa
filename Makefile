# Sluice — see README.md. Every target works from a clean clone.

# Go from the official tarball location, ahead of any distribution Go.
export PATH := /usr/local/go/bin:$(PATH)

.PHONY: test build run generate web image

## test: gofmt, go vet and every test (-race) against real PostgreSQL and Redis
test:
	bash scripts/test.sh

## build: the sluice binary in bin/
build:
	go build -o bin/sluice ./cmd/sluice

## run: build the dashboard (when npm is installed), then sluice serve with the embedded defaults (:8080, ./sluice-data)
run:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory web; fi
	go run ./cmd/sluice serve

## image: the container image (deploy/Containerfile) from scratch with buildah or podman; IMAGE=name:tag to name it (docs/deployment.md)
image:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory web; fi
	bash scripts/image.sh

## web: build the dashboard into web/dist, which the next Go build embeds (docs/dashboard.md)
web: web/node_modules/.package-lock.json
	cd web && npm run build

# npm ci again only when the lock file changed.
web/node_modules/.package-lock.json: web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	@touch $@

## generate: regenerate the gqlgen code from the GraphQL schema
generate:
	go tool gqlgen generate
