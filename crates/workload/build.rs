//! Embeds every benchmark model, scenario program and mix file under
//! `workloads/` so the `colab` binary carries its built-in workloads.
use std::{env, fs, path::Path};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads");
    let mut out = String::new();
    for (dir, konst) in [
        ("benchmarks", "BENCHMARK_FILES"),
        ("scenarios", "SCENARIO_FILES"),
        ("mixes", "MIX_FILES"),
    ] {
        let d = root.join(dir);
        println!("cargo:rerun-if-changed={}", d.display());
        let mut files: Vec<_> = fs::read_dir(&d)
            .map(|r| r.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|e| e == "toml"));
        files.sort();
        out.push_str(&format!("pub const {konst}: &[(&str, &str)] = &[\n"));
        for p in files {
            println!("cargo:rerun-if-changed={}", p.display());
            let rel = format!(
                "workloads/{dir}/{}",
                p.file_name().unwrap().to_string_lossy()
            );
            out.push_str(&format!(
                "    ({rel:?}, include_str!({:?})),\n",
                p.canonicalize().unwrap()
            ));
        }
        out.push_str("];\n");
    }
    fs::write(
        Path::new(&env::var("OUT_DIR").unwrap()).join("builtin_files.rs"),
        out,
    )
    .unwrap();
}
