//! `colab model-check`: a benchmark model against its recordings.

mod common;

use common::{assert_no_panic, fails, ok, run, s, tempdir, write};

#[test]
fn model_check_compares_a_model_with_its_recordings() {
    let lib = concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/parsec");
    let r = ok(&["model-check", "--traces", lib, "lu_cb"]);
    assert!(r.stdout.contains("| lu_cb | 4 / 4 |"), "{}", r.stdout);
    assert!(r.stdout.contains("of 1 models within 1.5x"), "{}", r.stdout);
    // A model file replaces the built-in one of that name: a model with no
    // barriers is outside the band, and --strict says so.
    let dir = tempdir();
    let m = write(
        dir.path(),
        "lu_cb.toml",
        "name = \"lu_cb\"\ndescription = \"d\"\nparallelism = \"data-parallel\"\n\
         sync_rate = \"low\"\ncomm_comp = \"low\"\ndefault_n = 4\nthreads_formula = \"n\"\n\
         [thread.main]\nops = [{ spawn = \"w\", count = \"n-1\" }, { compute = 5000, speedup = 2.0 }, { join = \"w\" }]\n\
         [thread.w]\nops = [{ compute = 5000, speedup = 2.0 }]\n",
    );
    let j = ok(&[
        "model-check",
        "--traces",
        lib,
        "--json",
        "--model",
        s(&m),
        "lu_cb",
    ]);
    let v: serde_json::Value = serde_json::from_str(j.stdout.trim()).unwrap();
    assert_eq!(v["model"]["broadcast"], 0.0);
    assert_eq!(v["broadcast"], "outside");
    // The table is printed all the same.
    let r = run(&[
        "model-check",
        "--traces",
        lib,
        "--strict",
        "--model",
        s(&m),
        "lu_cb",
    ]);
    assert_no_panic(&r);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(
        r.stderr.contains("outside the band: lu_cb"),
        "{}",
        r.describe()
    );
    assert!(r.stdout.contains("| lu_cb |"), "{}", r.describe());
    fails(
        &["model-check", "--traces", lib, "nosuch"],
        &["no recording of nosuch with 4 workers"],
    );
}
