#!/bin/sh
# Installs one engine CLI into the sandbox image exactly as the API installs it into its engine
# cache (src/engines/cli/install.ts): npm package <name> at <version> under
# /opt/engines/<name>@<version>, install scripts only when the third argument is `scripts`, and
# the install marker written last. A pod that finds the marker at the path a turn expects runs
# this copy instead of receiving one from the API (src/sandbox/kubernetes/pod-mounts.ts).
# Usage: sandbox-install-engine.sh <npm name> <version> [scripts]   (ENGINES_DIR: another root, to try it)
set -eu
name=$1; version=$2; scripts=${3:-}
dir="${ENGINES_DIR:-/opt/engines}/$name@$version"
mkdir -p "$dir"
# An empty package.json keeps npm from looking for one in the parent directories.
printf '{"private":true}\n' > "$dir/package.json"
if [ "$scripts" = scripts ]; then ignore=; else ignore=--ignore-scripts; fi
npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --omit=dev --loglevel=error $ignore "$name@$version"
date -u +%Y-%m-%dT%H:%M:%SZ > "$dir/.agent-service-installed"
