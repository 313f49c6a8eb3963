//! Compiles each hosted scheduler's BPF C, unmodified, as a native shared
//! object for the simulator: the scheduler's .bpf.c with the shim
//! (shim/scx/common.bpf.h) in place of the scx headers and vmlinux.h, then
//! the host's glue (shim/scx_host_glue.c) in the same translation unit. The
//! maps and tracing programs it defines are found in its source text here
//! and handed to the glue as a table (src/build_scan.rs). The compile itself
//! is src/native_build.rs, shared with the plug-in builder
//! (examples/build-scx-plugin.rs), which gets this compiler and the shim's
//! hash from here (`SCX_HOST_CC`, `SCX_HOST_CC_ARGS`, `SCX_HOST_SHIM_HASH`).

use std::path::PathBuf;

#[path = "src/build_scan.rs"]
mod build_scan;
#[path = "src/native_build.rs"]
mod native_build;

/// A scheduler built into the host: its name and its BPF entry file,
/// relative to this crate. scx_colab's is the very file its own build.rs
/// hands to scx_cargo (a test holds the two to one path).
const HOSTED: &[(&str, &str, &[&str])] = &[
    ("colab", "../scx_colab/src/bpf/main.bpf.c", &[]),
    // The host's test schedulers (tests/semantics.rs), not offered to users.
    ("probe", "tests/bpf/probe.bpf.c", &[]),
    (
        "probe_keep",
        "tests/bpf/probe.bpf.c",
        &["-DPROBE_NO_ENQ_LAST"],
    ),
    // The kfuncs added for scx_bpfland (tests/kfuncs.rs).
    ("kfuncs", "tests/bpf/kfuncs.bpf.c", &[]),
];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let shim = manifest.join("shim");
    println!("cargo:rerun-if-changed=shim");
    println!("cargo:rerun-if-changed=src/build_scan.rs");
    println!("cargo:rerun-if-changed=src/native_build.rs");
    let compiler = cc::Build::new().opt_level(2).pic(true).get_compiler();
    let cc = native_build::Compiler {
        program: compiler.path().to_path_buf(),
        args: compiler.args().to_vec(),
    };
    // The same compiler and shim for plug-ins built apart from the host
    // (examples/build-scx-plugin.rs), and the shim's hash they must carry.
    println!("cargo:rustc-env=SCX_HOST_CC={}", cc.program.display());
    println!("cargo:rustc-env=SCX_HOST_CC_ARGS={}", cc.args_string());
    let hash = native_build::shim_hash(&shim).unwrap_or_else(|e| panic!("scx_host: {e}"));
    println!("cargo:rustc-env=SCX_HOST_SHIM_HASH={hash:016x}");
    for (name, entry, defines) in HOSTED {
        let entry = manifest.join(entry);
        let entry = entry
            .canonicalize()
            .unwrap_or_else(|e| panic!("scx_host: {}: {e}", entry.display()));
        let so = out.join(format!("scx_{name}.so"));
        let sources = native_build::compile(name, &entry, defines, &shim, &out, &so, &cc)
            .unwrap_or_else(|e| panic!("{e}"));
        for s in &sources {
            println!("cargo:rerun-if-changed={}", s.display());
        }
    }
}
