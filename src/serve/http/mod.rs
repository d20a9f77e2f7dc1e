//! `c2s mcp --http ADDR`: the MCP server over streamable HTTP (the SDK's transport) for a team,
//! one server for many agents. A gate in front of the SDK checks the bearer token, enforces the
//! limits and logs each request; `GET /healthz` names the build served; the output is followed
//! as it is rebuilt (hot reload: each build served from a private copy, switched atomically);
//! SIGTERM or Ctrl-C stops it, letting requests in flight finish.

mod gate;
mod reload;
pub mod snapshot;

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::ServeError;
use super::mcp::{Live, McpServer, Served};
use super::tools::Tools;
use crate::config::ServeConfig;
use snapshot::Snapshot;

/// The path MCP is served at (`http://ADDR/mcp`).
pub const MCP_PATH: &str = "/mcp";

/// Connections open at once; past it a new one waits to be accepted (memory stays bounded).
const MAX_CONNECTIONS: usize = 1024;

/// Seconds requests in flight get to finish after SIGTERM or Ctrl-C.
const DRAIN_SECONDS: u64 = 5;

/// Which build is served, for `GET /healthz`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Health {
    pub lock_hash: String,
    pub built: Option<SystemTime>,
    pub documents: usize,
    pub loaded: Option<SystemTime>,
    pub reloads: u64,
    /// Why the newest build on disk is not served (it is being written, or it is invalid).
    pub not_served: Option<String>,
}

/// One line on stderr: the request log and the server's events. A closed stderr (the terminal
/// went away) loses the line, never the server.
pub(crate) fn log_line(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Serves the output at `out` on `addr` until SIGTERM or Ctrl-C.
pub fn serve(out: &Path, addr: &str, settings: &ServeConfig) -> Result<(), ServeError> {
    let runtime = runtime()?;
    // Listening starts first, before the private copy is made and before the server says it
    // is serving: a SIGTERM sent at any point from here (say the moment the "Serving" line
    // appears) stops it cleanly, never kills it with the copy left behind.
    let stop = {
        let _inside = runtime.enter();
        stop_signal()?
    };
    let server = Prepared::new(out, addr, settings)?;
    runtime.block_on(server.run(stop));
    Ok(())
}

/// A server running on a thread of its own (`c2s watch --serve`), until [`Running::stop`].
pub struct Running {
    stop: CancellationToken,
    thread: std::thread::JoinHandle<()>,
}

impl Running {
    /// Stops accepting, lets requests in flight finish, removes the copy.
    pub fn stop(self) {
        self.stop.cancel();
        let _ = self.thread.join();
    }
}

/// Starts serving the output at `out` on `addr` on a thread of its own; errors (the address,
/// the token, the output) come back before it starts.
pub fn start(out: &Path, addr: &str, settings: &ServeConfig) -> Result<Running, ServeError> {
    let server = Prepared::new(out, addr, settings)?;
    let runtime = runtime()?;
    let stop = CancellationToken::new();
    let until = stop.clone();
    let thread = std::thread::spawn(move || {
        runtime.block_on(server.run(until.cancelled_owned()));
    });
    Ok(Running { stop, thread })
}

fn runtime() -> Result<tokio::runtime::Runtime, ServeError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServeError::Mcp(format!("cannot start the async runtime: {e}")))
}

/// Everything checked and opened before serving: the listening socket, the token, the first
/// build.
struct Prepared {
    out: std::path::PathBuf,
    listener: std::net::TcpListener,
    token: Option<String>,
    settings: ServeConfig,
    live: Live,
    health: Arc<RwLock<Health>>,
}

impl Prepared {
    fn new(out: &Path, addr: &str, settings: &ServeConfig) -> Result<Prepared, ServeError> {
        // A client that goes away mid-response, or a closed stderr, must not stop the server
        // (c2s restores SIGPIPE's default so that `c2s … | head` ends quietly).
        #[cfg(unix)]
        // SAFETY: setting a signal's disposition to "ignore" has no other effect.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
        let addr = resolve(addr)?;
        let token = token(settings, &addr)?;
        Snapshot::remove_stale(out);
        let first = Snapshot::take(out, 0)?;
        let health = Arc::new(RwLock::new(Health::default()));
        let live = Live::new(served(first, &health)?);
        let listener = std::net::TcpListener::bind(addr)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| {
                ServeError::Http(
                    format!("cannot listen on {addr}: {e}"),
                    "pick another port, or stop the program that holds this one".into(),
                )
            })?;
        Ok(Prepared {
            out: out.to_path_buf(),
            listener,
            token,
            settings: settings.clone(),
            live,
            health,
        })
    }
}

/// The output in `snap` opened for serving, its build recorded in `health`.
fn served(snap: Snapshot, health: &RwLock<Health>) -> Result<Served, ServeError> {
    let tools = Tools::open(&snap.dir).map_err(|e| ServeError::NotOutput {
        path: snap.dir.clone(),
        why: e.to_string(),
    })?;
    let mut h = health.write().unwrap_or_else(|p| p.into_inner());
    h.lock_hash = snap.lock_hash.clone();
    h.built = Some(snap.built);
    h.documents = snap.documents;
    h.loaded = Some(SystemTime::now());
    h.not_served = None;
    Ok(Served {
        tools,
        keep: Some(Box::new(snap)),
    })
}

/// `HOST:PORT` as a socket address.
fn resolve(addr: &str) -> Result<SocketAddr, ServeError> {
    addr.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            ServeError::Http(
                format!("--http {addr:?} is not an address to listen on"),
                "give HOST:PORT, such as 127.0.0.1:8808".into(),
            )
        })
}

/// The bearer token from `[serve] token_env`; none is allowed only on a loopback address.
fn token(settings: &ServeConfig, addr: &SocketAddr) -> Result<Option<String>, ServeError> {
    match &settings.token_env {
        Some(var) => match std::env::var(var) {
            Ok(t) if !t.trim().is_empty() => Ok(Some(t.trim().to_string())),
            _ => Err(ServeError::Http(
                format!("[serve] token_env names {var}, which is not set or empty"),
                format!("export {var}=<a long random token> before starting the server"),
            )),
        },
        None if addr.ip().is_loopback() => Ok(None),
        None => Err(ServeError::Http(
            format!("refusing to serve {addr} without a token: any host that reaches it could read the output"),
            "set [serve] token_env = \"C2S_TOKEN\" in c2s.toml and export C2S_TOKEN, or serve on 127.0.0.1".into(),
        )),
    }
}

impl Prepared {
    /// Serves until `until` completes.
    async fn run(self, until: impl std::future::Future<Output = ()>) {
        let Prepared {
            out,
            listener,
            token,
            settings,
            live,
            health,
        } = self;
        let bound = listener
            .local_addr()
            .expect("a bound socket has an address");
        let listener = tokio::net::TcpListener::from_std(listener)
            .expect("a non-blocking socket, inside the runtime");
        let stop = CancellationToken::new();
        let sessions = Arc::new(LocalSessionManager::default());
        let mut hosts = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
        hosts.push(bound.ip().to_string());
        hosts.extend(settings.allowed_hosts.iter().cloned());
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(stop.child_token())
            .with_allowed_hosts(hosts)
            .with_max_request_body_bytes(settings.max_body_bytes);
        let factory_live = live.clone();
        let max_output = settings.max_output_bytes;
        let mcp = StreamableHttpService::new(
            move || Ok(McpServer::over(factory_live.clone()).with_max_output(max_output)),
            sessions.clone(),
            config,
        );
        let gate = Arc::new(gate::Gate::new(
            mcp,
            sessions,
            token,
            settings.clone(),
            health.clone(),
        ));
        log_line(&format!(
            "Serving {} over MCP at http://{bound}{MCP_PATH} (GET /healthz; Ctrl-C stops)",
            crate::paths::display(&out, Path::new("."))
        ));
        tokio::spawn(reload::follow(out, live, health, stop.clone()));
        accept(listener, gate, &settings, stop, until).await;
    }
}

/// Accepts connections until `signal`, then lets those open finish (up to [`DRAIN_SECONDS`]).
async fn accept(
    listener: tokio::net::TcpListener,
    gate: Arc<gate::Gate>,
    settings: &ServeConfig,
    stop: CancellationToken,
    signal: impl std::future::Future<Output = ()>,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let read_timeout = Duration::from_secs(settings.read_timeout_s.max(1));
    tokio::pin!(signal);
    loop {
        let permit = tokio::select! {
            _ = &mut signal => break,
            p = slots.clone().acquire_owned() => p.expect("the semaphore is never closed"),
        };
        let (stream, peer) = tokio::select! {
            _ = &mut signal => break,
            a = listener.accept() => match a {
                Ok(a) => a,
                Err(_) => continue,
            },
        };
        let gate = gate.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| gate.clone().handle(req, peer));
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(read_timeout)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(DRAIN_SECONDS), conn).await;
                }
            }
            drop(permit);
        });
    }
    log_line("Stopping: letting requests in flight finish");
    stop.cancel();
    let _ = tokio::time::timeout(
        Duration::from_secs(DRAIN_SECONDS),
        slots.acquire_many(MAX_CONNECTIONS as u32),
    )
    .await;
}

/// SIGTERM or Ctrl-C: a future that completes on either. Both are listened for from this call
/// on (inside the runtime), not from the future's first poll, so one sent before the server
/// first waits is not lost.
fn stop_signal() -> Result<impl std::future::Future<Output = ()>, ServeError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let cannot = |e: std::io::Error| {
            ServeError::Mcp(format!("cannot listen for SIGTERM or Ctrl-C: {e}"))
        };
        let mut term = signal(SignalKind::terminate()).map_err(cannot)?;
        let mut int = signal(SignalKind::interrupt()).map_err(cannot)?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_sigterm_before_the_first_wait_stops_the_server_and_not_the_process() {
        let runtime = runtime().unwrap();
        let stop = {
            let _inside = runtime.enter();
            stop_signal().unwrap()
        };
        // Were the handler installed on the first poll, this would kill the test binary.
        // SAFETY: raising a signal this process handles has no other effect.
        assert_eq!(unsafe { libc::raise(libc::SIGTERM) }, 0);
        let done =
            runtime.block_on(async { tokio::time::timeout(Duration::from_secs(10), stop).await });
        assert!(done.is_ok(), "the SIGTERM was lost");
    }
}
