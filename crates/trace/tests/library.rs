//! Every trace library shipped in `traces/` loads, and every recording in
//! it parses, passes the consistency checks and replays with its manifest's
//! speedups.

use colab_trace::library::{read_trace_text, Manifest, MANIFEST};
use colab_trace::{to_program, ReplayOptions, Trace};
use std::path::Path;

#[test]
fn every_shipped_trace_replays() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces");
    let mut libs: Vec<_> = std::fs::read_dir(&root)
        .expect("the repository has a traces/ directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|d| d.join(MANIFEST).is_file())
        .collect();
    libs.sort();
    assert!(
        !libs.is_empty(),
        "no trace library under {}",
        root.display()
    );
    for dir in libs {
        let m = Manifest::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert!(!m.trace.is_empty(), "{}: no recordings", dir.display());
        for e in &m.trace {
            let path = dir.join(&e.file);
            let text =
                read_trace_text(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            let trace =
                Trace::parse(&path.to_string_lossy(), &text).unwrap_or_else(|err| panic!("{err}"));
            assert_eq!(
                trace.header.status.map(|s| s.success()),
                Some(true),
                "{}",
                e.name
            );
            let opts = ReplayOptions {
                name: e.name.clone(),
                speedup: e.speedup,
                thread_speedup: e.thread_speedup.clone(),
                keep_tracing_overhead: false,
                sleep_unnamed_wakes: false,
            };
            let p = to_program(&trace, &opts).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            assert!(p.total_threads >= 1, "{}", e.name);
            if let Some(t) = e.threads {
                // The program's workers, at least (PARSEC adds its own).
                assert!(
                    p.total_threads >= t,
                    "{}: {} threads",
                    e.name,
                    p.total_threads
                );
            }
        }
    }
}
