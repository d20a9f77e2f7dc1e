//! The `c2s` binary: parse the command line and hand it to the library.

use clap::Parser;

/// mimalloc, built without transparent huge pages (see Cargo.toml): the offline results a build
/// computes allocate many small strings.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    restore_sigpipe();
    c2s::run(c2s::cmd::cli::Cli::parse())
}

/// Rust ignores SIGPIPE, so printing into a closed pipe (`c2s cache stats | head`) panics. A
/// command-line tool ends quietly there instead, as `cat` and `grep` do. Sockets are not
/// affected: the standard library writes to them with `MSG_NOSIGNAL`.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to its default, before any other thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
