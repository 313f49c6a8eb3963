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
    assert!(crate::by_name("rota:rotate=off:order=capped:stay=off").is_ok());
    for good in [
        "rota:pull-min=on",
        "rota:pull-min=off",
        "rota:pull-min=siblings",
    ] {
        assert!(crate::by_name(good).is_ok(), "{good}");
    }
    let e = crate::by_name("rota:pull-min=some")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("'pull-min' takes siblings, on, off"), "{e}");
    for bad in [
        "rota:rotate=maybe",
        "rota:nope=on",
        "rota:rotate",
        "rota:order=random",
        "rota:order=fifo",
        "rota:migration-us=0",
        "rota:migration-us=-5",
        "rota:migration-us=100001",
        "rota:migration-us=nan",
        "rota:quantum=20ms",
        "rota:quantum=young",
        "rota:sibling-turns=maybe",
        "rota@17",
        "rota@x",
        "rota@3:floor=on",
    ] {
        let e = crate::by_name(bad).err().expect(bad).to_string();
        assert!(e.contains(bad), "{e}");
    }
    let e = crate::by_name("rota@2").err().unwrap().to_string();
    assert!(e.contains("the presets are @20, @19"), "{e}");
    // A name that only starts like rota's is not rota.
    assert!(crate::by_name("rotax").is_err());
    assert!(crate::by_name("rota").unwrap().reads_predictions());
}

/// Each preset sets every switch exactly once, so that it means the same
/// whatever the default; the default's preset is the default.
#[test]
fn rota_presets_are_complete_and_the_default_is_its_freeze() {
    for (n, spelling) in crate::rota::PRESETS {
        let keys: Vec<&str> = spelling
            .split(':')
            .map(|kv| kv.split_once('=').unwrap().0)
            .collect();
        let want: Vec<&str> = crate::rota::SWITCHES.iter().map(|s| s.key).collect();
        assert_eq!(
            keys, want,
            "rota@{n} sets every switch once, in the table's order"
        );
        let p = RotaParams::preset(*n).unwrap();
        assert_eq!(&p.spelling(), spelling, "rota@{n} reads back");
    }
    let default = RotaParams::preset(crate::rota::DEFAULT_FREEZE).unwrap();
    assert_eq!(default, RotaParams::default());
    assert_eq!(RotaParams::default().spelling(), crate::rota::PRESETS[0].1);
    // rota@3:KEY=VALUE changes one switch of the preset.
    let mut third = RotaParams::preset(3).unwrap();
    assert_eq!(third.order, crate::rota::Order::Capped);
    third.parse_options("hold=on").unwrap();
    assert!(third.hold && !RotaParams::preset(3).unwrap().hold);
}

/// Every value of every switch parses and reads back as itself.
#[test]
fn rota_every_switch_value_round_trips() {
    for s in crate::rota::SWITCHES {
        for v in s.values().into_iter().filter(|v| *v != "US") {
            let mut p = RotaParams::default();
            p.parse_options(&format!("{}={v}", s.key)).unwrap();
            let spelled = p.spelling();
            assert!(
                spelled.contains(&format!("{}={v}", s.key)),
                "{}={v}: {spelled}",
                s.key
            );
        }
    }
}

/// The book's switch list (book/src/guide/policies.md) is the table's.
#[test]
fn the_books_switch_list_is_the_table() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../book/src/guide/policies.md"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let begin = "<!-- rota switches: generated from crates/policies/src/rota/params.rs (SWITCHES, PRESETS); a test checks this copy -->\n";
    let end = "<!-- rota switches end -->";
    let from = text.find(begin).expect("the begin marker") + begin.len();
    let to = text.find(end).expect("the end marker");
    let want = crate::rota::options_markdown();
    if std::env::var_os("COLAB_BLESS").is_some() {
        std::fs::write(path, format!("{}{want}{}", &text[..from], &text[to..])).unwrap();
        return;
    }
    assert!(
        text[from..to] == want,
        "book/src/guide/policies.md's ROTA switch list differs from crates/policies/src/rota/params.rs; \
         COLAB_BLESS=1 cargo test -p colab-policies the_books_switch_list rewrites it"
    );
}
