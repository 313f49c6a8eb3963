//! Compiles src/bpf/main.bpf.c (with the scx headers and vmlinux.h bundled in
//! scx_cargo) into a libbpf skeleton, and src/bpf/intf.h into Rust types.

use std::path::Path;

fn main() {
    // scx_cargo runs $BPF_CLANG. .cargo/config.toml sets it to
    // scripts/bpf-clang, the one search for a clang >= 18, for this build
    // script and scx_utils' alike; cargo reads that file only when run from
    // inside the repository, so name the script here too (scx_utils' build
    // script, out of reach, then runs `clang` from PATH).
    println!("cargo:rerun-if-env-changed=BPF_CLANG");
    if std::env::var_os("BPF_CLANG").is_none() {
        let search = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/bpf-clang");
        // Build scripts are single-threaded here: nothing reads the
        // environment concurrently.
        std::env::set_var("BPF_CLANG", search);
    }

    scx_cargo::BpfBuilder::new()
        .expect("scx_colab: setting up the BPF build (clang >= 18: see scripts/bpf-clang)")
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .build()
        .expect("scx_colab: building the BPF program");
}
