#!/usr/bin/env bash
# Builds Prometheus's promtool from the pinned Go module (Prometheus 3.x is tagged v0.3xx.y as a Go module) into
# a directory keyed by the version, outside the checkout, and prints the binary's path. A later run reuses it.
# The module and build caches are thrown away after the build: only the binary is kept.
set -euo pipefail
PROMETHEUS_MODULE_VERSION=v0.316.0
PROMTOOL_DIR="${PROMTOOL_DIR:-${TMPDIR:-/tmp}/docs-agent-promtool-${PROMETHEUS_MODULE_VERSION}}"
PROMTOOL="$PROMTOOL_DIR/bin/promtool"

if [ ! -x "$PROMTOOL" ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/docs-agent-promtool-build.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  # Without the service discoveries (none of rules or metrics checks needs one), stripped, without local paths:
  # half the modules to download and compile.
  GOBIN="$work/bin" GOPATH="$work/go" GOMODCACHE="$work/mod" GOCACHE="$work/cache" \
    GOFLAGS="-trimpath -modcacherw" GOTOOLCHAIN=local \
    go install -tags remove_all_sd -ldflags='-s -w' "github.com/prometheus/prometheus/cmd/promtool@${PROMETHEUS_MODULE_VERSION}" >&2
  mkdir -p "$PROMTOOL_DIR/bin"
  # Moved whole once built: an interrupted build leaves no binary behind to be taken for a good one.
  mv "$work/bin/promtool" "$PROMTOOL"
fi
echo "$PROMTOOL"
