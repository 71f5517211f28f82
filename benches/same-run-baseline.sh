#!/usr/bin/env bash
# Times this tree's scheduling run against an older commit's on this
# machine, in one run, on the same generated cluster: figures taken on
# another machine compare only through such a pair.
#
#   benches/same-run-baseline.sh [commit] [rounds]
#
# commit: the baseline, 6e3d671 by default (contract 0.2.0, whose figures
# were 781 ms / 12,800 pods/s as components). Its tree is a git
# worktree under target/baseline/ with a target directory of its own (the
# first build takes about 10 minutes here), and the cluster is what its
# own `wasched generate` prints for 5,000 nodes / 10,000 pending pods
# (seed 1, gpu), the input of its `simulate_generated`. Each round runs
# the baseline, then this tree, three times each, as components and then
# natively, so both see the same load.
set -euo pipefail

base=${1:-6e3d671}
rounds=${2:-3}
root=$(git rev-parse --show-toplevel)
work=$root/target/baseline
tree=$work/tree
example=benches/examples/time_simulate.rs

# A worktree deleted with target/ (cargo clean) is still registered.
git -C "$root" worktree prune
if [ ! -d "$tree" ]; then
    git -C "$root" worktree add --detach "$tree" "$base" >/dev/null
fi
rm -f "$tree/$example"
if [ "$(git -C "$tree" rev-parse HEAD)" != "$(git -C "$root" rev-parse "$base^{commit}")" ]; then
    git -C "$tree" checkout --force --detach "$base" >/dev/null
fi
# host/build.rs puts the plugins under the nearest target directory holding
# CACHEDIR.TAG, which cargo writes only into a directory it creates: the
# baseline's, pre-made here, would otherwise find this tree's and overwrite
# its bundled plugins, and this tree's, if made here first, would be
# missed.
tag='Signature: 8a477f597d28d172789f06886806bc55'
for dir in "$root/target" "$work/target"; do
    mkdir -p "$dir"
    [ -e "$dir/CACHEDIR.TAG" ] || printf '%s\n' "$tag" >"$dir/CACHEDIR.TAG"
done
mkdir -p "$tree/benches/examples"
cp "$root/$example" "$tree/$example"

build() { # tree, target dir
    (cd "$1" && CARGO_TARGET_DIR=$2 cargo build --release --quiet -p wasched -p wasched-benches --bin wasched --example time_simulate)
}
build "$tree" "$work/target"
build "$root" "$root/target"

cluster=$work/cluster-$(git -C "$root" rev-parse --short "$base^{commit}").yaml
"$work/target/release/wasched" generate --nodes 5000 --pending-pods 10000 --seed 1 --shape gpu >"$cluster"

echo "baseline $base ($(git -C "$tree" log -1 --format=%cs)) against $(git -C "$root" rev-parse --short HEAD), $cluster"
for round in $(seq "$rounds"); do
    for plugins in component native; do
        # Assigned first, so that a failing run stops the script.
        line=$("$work/target/release/examples/time_simulate" "$cluster" "$plugins" 3)
        echo "round $round baseline $line"
        line=$("$root/target/release/examples/time_simulate" "$cluster" "$plugins" 3)
        echo "round $round this     $line"
    done
done
