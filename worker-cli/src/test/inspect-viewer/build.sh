#!/usr/bin/env bash
# Builds the page that hosts the Inspect AI log viewer for InspectViewerBrowserTest:
# installs the locked npm packages and bundles viewer.jsx into dist/ with esbuild.
# Needs node and npm; Maven runs it before worker-cli's tests (this folder's pom.xml, a module of
# its own so that it builds beside control-core rather than on worker-cli's way; skipped with
# -DskipTests). Output (node_modules/, dist/) is git-ignored.
#
# The page depends only on the files hashed below, so it is rebuilt only when one of them changes:
# dist/.inputs holds the hash of the page it holds, and a page built once is kept in the user's
# cache ($PANOPTES_CACHE_DIR, else $XDG_CACHE_HOME/panoptes, else ~/.cache/panoptes), under that
# hash, for the next clone (npm ci takes some 15 s of two cores; a copy, milliseconds).
set -euo pipefail
cd "$(dirname "$0")"
key=$(sha256sum package.json package-lock.json viewer.jsx index.html build.sh | sha256sum | cut -c1-32)
if [ -f dist/viewer.js ] && [ "$(cat dist/.inputs 2>/dev/null)" = "$key" ]; then
  echo "the Inspect viewer page is up to date: $(pwd)/dist"
  exit 0
fi
cache_root="${PANOPTES_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/panoptes}/inspect-viewer"
cached="$cache_root/$key"
if [ -f "$cached/viewer.js" ]; then
  rm -rf dist
  cp -R "$cached" dist
  echo "$key" > dist/.inputs
  echo "the Inspect viewer page for these sources was built before: copied from $cached to $(pwd)/dist"
  exit 0
fi
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "cannot build the Inspect viewer page for InspectViewerBrowserTest: '$tool' is not on the PATH;" \
      "install Debian's nodejs and npm (sudo apt-get install -y nodejs npm), or skip the tests with -DskipTests" >&2
    exit 1
  fi
done
# The locked packages from npm's own cache when it has them (the registry otherwise). esbuild's
# binary ships in its platform package; its install script only checks it.
npm ci --prefer-offline --no-audit --no-fund --loglevel=error
rm -rf dist
npm run --silent build
echo "$key" > dist/.inputs
echo "built $(pwd)/dist"
# Kept for the next clone; a cache that cannot be written only costs the next clone a build.
if mkdir -p "$cache_root" 2>/dev/null && staging=$(mktemp -d "$cache_root/.staging.XXXXXX" 2>/dev/null); then
  if cp -R dist/. "$staging"/ && rm -f "$staging/.inputs" && mv -T "$staging" "$cached" 2>/dev/null; then
    echo "kept in $cached"
  else
    rm -rf "$staging"
  fi
fi
