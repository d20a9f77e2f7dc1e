//! `c2s publish`: upload the top-level skills of an output to the Claude Skills API.

use crate::cmd::EXIT_OK;
use crate::cmd::Error;
use crate::cmd::cli::PublishArgs;
use crate::progress::Progress;

pub fn publish_cmd(args: &PublishArgs, progress: &Progress) -> Result<u8, Error> {
    let target = crate::cmd::serve::serve_target(&args.target)?;
    crate::publish::publish(
        &target.out,
        &target.loaded.config.publish,
        args.prune,
        args.dry_run,
        progress,
    )?;
    Ok(EXIT_OK)
}
