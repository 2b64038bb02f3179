#!/bin/sh
# Installs one engine CLI into the sandbox image exactly as the API installs it into its engine
# cache (src/engines/cli/install.ts): npm package <name> at <version> under
# /opt/engines/<name>@<version>, install scripts only as the third argument's allowScripts
# policy (JSON, npm 11.19's field) approves, and the install marker written last. A pod that finds
# the marker at the path a turn expects runs this copy instead of receiving one from the API
# (src/sandbox/kubernetes/pod-mounts.ts). Scripts run with the first `node` on PATH.
# Usage: sandbox-install-engine.sh <npm name> <version> ['{"pkg":true,"dep":false}']   (ENGINES_DIR: another root, to try it)
set -eu
name=$1; version=$2; policy=${3:-}
dir="${ENGINES_DIR:-/opt/engines}/$name@$version"
mkdir -p "$dir"
# The package.json also keeps npm from looking for one in the parent directories.
if [ -n "$policy" ]; then
  printf '{"private":true,"allowScripts":%s}\n' "$policy" > "$dir/package.json"; ignore=
else
  printf '{"private":true}\n' > "$dir/package.json"; ignore=--ignore-scripts
fi
npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --omit=dev --loglevel=error $ignore "$name@$version"
date -u +%Y-%m-%dT%H:%M:%SZ > "$dir/.agent-service-installed"
