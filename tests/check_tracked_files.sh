#!/bin/sh
# Fails if git tracks files that builds and test runs generate: lit's Output/
# folders (they hold absolute build paths), build trees, objects and archives.
# Skipped (exit 77) outside a git checkout, where there is nothing to check.
cd "$(dirname "$0")/.." || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
generated=$(git ls-files | grep -E '(^|/)(Output|build)/|\.(o|a|so)$')
if [ -n "$generated" ]; then
  echo "generated files are tracked by git (remove them; .gitignore keeps them out):"
  echo "$generated"
  exit 1
fi
echo "no generated files tracked"
