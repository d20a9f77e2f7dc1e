//! `c2s check`: is the output fresh? Answers from `c2s.lock` alone (stat first, through the
//! stat index of the cache folder when there is one).

use serde::Serialize;

use crate::cmd::Error;
use crate::cmd::cli::CheckArgs;
use crate::cmd::{EXIT_OK, EXIT_STALE};

pub fn check_cmd(args: &CheckArgs) -> Result<u8, Error> {
    let target = args.target.resolve()?;
    let seen = crate::pipeline::freshness::examine(
        &target.loaded,
        &target.out_dir,
        &target.display_base,
        false,
    )?;
    let st = &seen.staleness;
    let out = crate::paths::display(&target.out_dir, &target.display_base);
    let fix = args.target.build_command();
    let platform = seen.platform(&target.loaded.config.output);
    let vetted = if args.verify_state {
        Some(verify_state(&target)?)
    } else {
        None
    };
    let failed = vetted.as_ref().is_some_and(|v| !v.rejected.is_empty());
    if args.json {
        #[derive(Serialize)]
        struct Json<'a> {
            fresh: bool,
            output: &'a str,
            #[serde(flatten)]
            findings: &'a crate::pipeline::freshness::Staleness,
            fix: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            platform: Option<&'a crate::format::limits::PlatformReport>,
            /// Files whose bytes were read (the others were known by their stat).
            hashed: usize,
            #[serde(skip_serializing_if = "Option::is_none")]
            state: Option<&'a Vetted>,
        }
        let fresh = st.is_fresh();
        let j = Json {
            fresh,
            output: &out,
            findings: st,
            fix: (!fresh).then_some(fix.as_str()),
            platform: platform.as_ref(),
            hashed: seen.hashed,
            state: vetted.as_ref(),
        };
        println!("{}", serde_json::to_string(&j)?);
    } else {
        if st.is_fresh() {
            print!("{}", crate::pipeline::freshness::render(st, &out, &fix));
        } else {
            eprint!("{}", crate::pipeline::freshness::render(st, &out, &fix));
        }
        for w in platform.iter().flat_map(|p| &p.warnings) {
            eprintln!("warning: {w}");
        }
        if let Some(v) = &vetted {
            if failed {
                eprint!("{}", render_vetted(v, &out));
            } else {
                print!("{}", render_vetted(v, &out));
            }
        }
    }
    Ok(if st.is_fresh() && !failed {
        EXIT_OK
    } else {
        EXIT_STALE
    })
}

/// What `--verify-state` found.
#[derive(Serialize)]
pub struct Vetted {
    /// Results of the state that the build asks for and that passed their checks.
    pub passed: usize,
    pub rejected: Vec<crate::db::exec::Rejected>,
    pub seconds: f64,
}

/// Vets the committed state: a dry run that takes every result from it, as a fresh clone's
/// build does (stand-in backends: no model is called, nothing is written).
fn verify_state(target: &crate::cmd::cli::Target) -> Result<Vetted, Error> {
    let start = std::time::Instant::now();
    let opts = crate::pipeline::options::BuildOptions {
        dry_run: true,
        verify_state: true,
        ..crate::pipeline::options::BuildOptions::new(
            target.loaded.clone(),
            target.out_dir.clone(),
            target.display_base.clone(),
        )
    };
    let report = crate::pipeline::build::build(&opts, &crate::progress::Progress::silent())?;
    Ok(Vetted {
        passed: report.seeded,
        rejected: report.rejected,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The verdict on the state, for a terminal.
fn render_vetted(v: &Vetted, out: &str) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if v.rejected.is_empty() {
        let _ = writeln!(
            s,
            "state: the {} results this build takes from {out}/state/ pass their checks ({:.2} s)",
            v.passed, v.seconds
        );
        return s;
    }
    for r in &v.rejected {
        let _ = writeln!(s, "{}", r.warning_line());
    }
    let _ = writeln!(
        s,
        "state: {} of the results in {out}/state/ fail their checks; {} pass ({:.2} s)",
        v.rejected.len(),
        v.passed,
        v.seconds
    );
    let _ = writeln!(
        s,
        "  help: the committed state holds results that a build from these sources would not make (edited by hand, or by someone else). Do not merge it as it is: `c2s build` computes those results again (a build never uses one that fails), then commit the output it writes"
    );
    s
}
