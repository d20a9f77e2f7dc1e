//! `c2s check`: is the output fresh? Answers from `c2s.lock` alone (stat first, through the
//! stat index of the cache folder when there is one).

use serde::Serialize;

use crate::cmd::Error;
use crate::cmd::cli::CheckArgs;
use crate::cmd::{EXIT_OK, EXIT_STALE};

pub fn check_cmd(args: &CheckArgs) -> Result<u8, Error> {
    let target = args.target.resolve()?;
    let seen =
        crate::pipeline::freshness::examine(&target.loaded, &target.out_dir, &target.display_base)?;
    let st = &seen.staleness;
    let out = crate::paths::display(&target.out_dir, &target.display_base);
    let fix = args.target.build_command();
    let platform = seen.platform(&target.loaded.config.output);
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
        }
        let fresh = st.is_fresh();
        let j = Json {
            fresh,
            output: &out,
            findings: st,
            fix: (!fresh).then_some(fix.as_str()),
            platform: platform.as_ref(),
            hashed: seen.hashed,
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
    }
    Ok(if st.is_fresh() { EXIT_OK } else { EXIT_STALE })
}
