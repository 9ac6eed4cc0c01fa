# Sluice — see README.md. Every target works from a clean clone.

# Go from the official tarball location, ahead of any distribution Go.
export PATH := /usr/local/go/bin:$(PATH)

.PHONY: test build run generate

## test: gofmt, go vet and every test (-race) against real PostgreSQL and Redis
test:
	bash scripts/test.sh

## build: the sluice binary in bin/
build:
	go build -o bin/sluice ./cmd/sluice

## run: sluice serve with the embedded defaults (:8080, ./sluice-data)
run:
	go run ./cmd/sluice serve

## generate: regenerate the gqlgen code from the GraphQL schema
generate:
	go tool gqlgen generate
