#!/bin/sh
# Every ```c block of README.md is a complete program: extract each, build it with the README's
# command (warnings as errors) and run it. Usage: tests/readme_snippets.sh BUILD_DIR [CC]
set -eu
B=$1; CC=${2:-cc}
mkdir -p "$B/readme"
awk -v dir="$B/readme" '
    /^```c[ \t]*$/ { n++; f = sprintf("%s/snippet%d.c", dir, n); inblk = 1; next }
    /^```/ && inblk { inblk = 0; close(f); next }
    inblk { print > f }
    END { print n > (dir "/count") }' README.md
n=$(cat "$B/readme/count")
[ "$n" -ge 1 ] || { echo "readme: no C blocks found"; exit 1; }
i=1
while [ "$i" -le "$n" ]; do
    src="$B/readme/snippet$i.c"
    $CC -std=c99 -O2 -Wall -Wextra -pedantic -Werror -I. -o "$B/readme/snippet$i" "$src" -lm ||
        { echo "readme: C block $i does not build"; exit 1; }
    "./$B/readme/snippet$i" > "$B/readme/snippet$i.out" || { echo "readme: C block $i exits non-zero"; cat "$B/readme/snippet$i.out"; exit 1; }
    echo "readme: C block $i builds and runs: $(head -1 "$B/readme/snippet$i.out")"
    i=$((i + 1))
done
