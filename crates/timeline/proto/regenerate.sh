#!/bin/sh
# Regenerates crates/timeline/src/perfetto.protos.rs from perfetto_trace_subset.proto with
# prost-build (the prost version the crate uses). Run from the workspace root; needs protoc.
set -eu
root=$(pwd)
gen="$root/target/protogen"
mkdir -p "$gen/src"
cat > "$gen/Cargo.toml" <<'TOML'
[package]
name = "protogen"
version = "0.0.0"
edition = "2021"
publish = false
[workspace]
[dependencies]
prost-build = "0.14"
TOML
cat > "$gen/src/main.rs" <<'RS'
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    prost_build::Config::new()
        .out_dir(&args[2])
        .compile_protos(&[&args[0]], &[&args[1]])
        .expect("prost-build failed");
}
RS
out=$(mktemp -d)
cargo run --quiet --release --manifest-path "$gen/Cargo.toml" -- \
    "$root/crates/timeline/proto/perfetto_trace_subset.proto" "$root/crates/timeline/proto" "$out"
cp "$out/perfetto.protos.rs" "$root/crates/timeline/src/perfetto.protos.rs"
rm -r "$out"
