//! ROTA's option string: each switch parses, bad ones are errors, and
//! `migration-us` sets the constants.

use super::*;

/// `migration-us` sets the constants as scx_colab's `--migration-us` does:
/// at 1 us the pull threshold is 4 us, so a thread that has run 10 us is
/// pulled; at the topology's 100 us (400 us) it is not.
#[test]
fn rota_migration_us_sets_the_constants() {
    let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0)]);
    st.now = 10 * MS;
    run_on(&mut st, 2, 1);
    st.now += 10 * US;
    let mut p = rota(&st, "pull-min=on");
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    let mut p = rota(&st, "pull-min=on:migration-us=100");
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    let mut p = rota(&st, "pull-min=on:migration-us=1");
    assert!(matches!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote { .. }
    ));
}

#[test]
fn rota_options_parse_and_bad_ones_are_errors() {
    assert!(crate::by_name("rota").is_ok());
    assert!(crate::by_name("rota:rotate=off:order=owed:group=on").is_ok());
    for good in [
        "rota:pull-min=on",
        "rota:pull-min=off",
        "rota:pull-min=siblings",
        "rota:pull-min=siblings-short",
    ] {
        assert!(crate::by_name(good).is_ok(), "{good}");
    }
    let e = crate::by_name("rota:pull-min=some")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("'pull-min' takes on, off, siblings"), "{e}");
    for bad in [
        "rota:rotate=maybe",
        "rota:nope=on",
        "rota:rotate",
        "rota:order=random",
        "rota:cap=-1",
        "rota:cap=1001",
        "rota:rotate-after=never",
        "rota:migration-us=0",
        "rota:migration-us=-5",
        "rota:migration-us=100001",
        "rota:migration-us=nan",
        "rota:quantum=20ms",
        "rota:quantum=young",
        "rota:sibling-turns=maybe",
    ] {
        let e = crate::by_name(bad).err().expect(bad).to_string();
        assert!(e.contains(bad), "{e}");
    }
    // Only the speedup-based choices read predictions: the capped order
    // weighs fast-core time by predicted speedup, FIFO does not.
    assert!(crate::by_name("rota").unwrap().reads_predictions());
    assert!(!crate::by_name("rota:order=fifo")
        .unwrap()
        .reads_predictions());
    assert!(!crate::by_name("rota:order=capped:weighted=off")
        .unwrap()
        .reads_predictions());
    assert!(crate::by_name("rota:order=speed")
        .unwrap()
        .reads_predictions());
    assert!(crate::by_name("rota:order=ntt")
        .unwrap()
        .reads_predictions());
}
