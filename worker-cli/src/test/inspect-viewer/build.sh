#!/usr/bin/env bash
# Builds the page that hosts the Inspect AI log viewer for InspectViewerBrowserTest:
# installs the locked npm packages and bundles viewer.jsx into dist/ with esbuild.
# Needs node and npm; Maven runs it before worker-cli's tests (exec-maven-plugin, skipped with
# -DskipTests). Output (node_modules/, dist/) is git-ignored. A page newer than its sources is kept.
set -euo pipefail
cd "$(dirname "$0")"
if [ -f dist/viewer.js ] && [ -z "$(find package.json package-lock.json viewer.jsx index.html -newer dist/viewer.js)" ]; then
  echo "the Inspect viewer page is up to date: $(pwd)/dist"
  exit 0
fi
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "cannot build the Inspect viewer page for InspectViewerBrowserTest: '$tool' is not on the PATH;" \
      "install Debian's nodejs and npm (sudo apt-get install -y nodejs npm), or skip the tests with -DskipTests" >&2
    exit 1
  fi
done
# esbuild's binary ships in its platform package; its install script only checks it.
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
echo "built $(pwd)/dist"
