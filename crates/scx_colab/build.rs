//! Compiles src/bpf/main.bpf.c (with the scx headers and vmlinux.h bundled in
//! scx_cargo) into a libbpf skeleton, and src/bpf/intf.h into Rust types.

use std::path::Path;

/// clang as shipped by Debian's clang-19 package, not on PATH by default.
const DEBIAN_CLANG: &str = "/usr/lib/llvm-19/bin/clang";

fn on_path(cmd: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(cmd).is_file()))
        .unwrap_or(false)
}

fn main() {
    println!("cargo:rerun-if-env-changed=BPF_CLANG");
    println!("cargo:rerun-if-env-changed=CLANG");
    if std::env::var_os("BPF_CLANG").is_none() {
        // CLANG is accepted as an alias; then clang on PATH; then Debian's clang-19.
        let clang = if let Some(c) = std::env::var_os("CLANG") {
            Some(c.to_string_lossy().into_owned())
        } else if on_path("clang") {
            None
        } else if Path::new(DEBIAN_CLANG).is_file() {
            Some(DEBIAN_CLANG.to_string())
        } else {
            panic!(
                "scx_colab: no clang found to compile its BPF program: clang is not on PATH and \
                 {DEBIAN_CLANG} does not exist. Install clang >= 16 (Debian: \
                 `apt-get install -y clang-19 llvm-19 libelf-dev zlib1g-dev`) or set \
                 BPF_CLANG=/path/to/clang."
            );
        };
        if let Some(c) = clang {
            // Build scripts are single-threaded here: nothing reads the
            // environment concurrently.
            std::env::set_var("BPF_CLANG", c);
        }
    }

    scx_cargo::BpfBuilder::new()
        .expect("scx_colab: setting up the BPF build (is clang >= 16 installed?)")
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .build()
        .expect("scx_colab: building the BPF program");
}
