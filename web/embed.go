// Package web serves the Sluice dashboard: a single-page app (React and
// TypeScript, built with Vite from this directory) embedded in the binary.
//
// The app is built into web/dist by `make web` (npm ci && npm run build);
// dist/.gitkeep is committed so that the embed below always finds the
// directory. A binary built without the assets serves a page saying how to
// build them instead of the app.
package web

import "embed"

// dist holds the built app. all: keeps dotfiles (the .gitkeep), which the
// handler never serves.
//
//go:embed all:dist
var dist embed.FS
