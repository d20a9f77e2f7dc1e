//! `c2s mcp --http` under bad input, over raw loopback HTTP: an oversized body (413), malformed
//! JSON, an unknown session, a client that never finishes its headers or its body (timed out),
//! a client over the request rate (429), one session past the cap (503), memory that stays
//! bounded, the refusals to start (no token off loopback, a token variable unset, an address
//! that is not one), and a clean stop on SIGTERM. The server goes on answering after each.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::{c2s, stderr};
use crate::mcp_http::{HttpServer, INIT, built_copy, open_session, post, request};

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn bad_requests_get_their_errors_and_the_server_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let out = built_copy(tmp.path());
    let server = HttpServer::start(
        &out,
        &[
            "serve.max_body_bytes=2000",
            "serve.read_timeout_s=1",
            "serve.max_sessions=2",
        ],
        &[],
    );
    let addr = server.addr.clone();
    // Oversized: 413, however the body is sent.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(5000)
    );
    let (status, body) = request(&addr, &post(&big, None, None));
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("max_body_bytes"), "{body}");
    // Malformed JSON: a JSON-RPC parse error, not a crash.
    let (status, body) = request(&addr, &post("{not json", None, None));
    assert!((400..500).contains(&status), "{status} {body}");
    // An unknown session.
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let (status, _) = request(&addr, &post(ping, Some("no-such-session"), None));
    assert_eq!(status, 404);
    // A body that never finishes: 408 after the read timeout.
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let t = Instant::now();
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\"").unwrap();
    let mut buf = String::new();
    let _ = s.read_to_string(&mut buf);
    assert!(buf.starts_with("HTTP/1.1 408"), "{buf}");
    assert!(t.elapsed() < Duration::from_secs(5));
    // Headers that never finish: the connection is closed.
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.").unwrap();
    let t = Instant::now();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "closed after the timeout"
    );
    // Sessions past the cap: 503; the open ones go on.
    let (a, _) = open_session(&addr);
    let (_b, _) = open_session(&addr);
    let (status, body) = request(&addr, &post(INIT, None, None));
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("max_sessions"));
    let (status, body) = request(&addr, &post(ping, Some(&a), None));
    assert_eq!(status, 200, "{body}");
    // Memory stays bounded under many oversized bodies.
    let pid = server_pid(&server);
    let before = rss_kib(pid);
    let huge = "x".repeat(4 << 20);
    for _ in 0..40 {
        let _ = request(&addr, &post(&huge, None, None));
    }
    let after = rss_kib(pid);
    assert!(after < before + 64 * 1024, "RSS {before} → {after} KiB");
    // Still serving.
    assert_eq!(server.health()["status"], "ok");
}

fn server_pid(server: &HttpServer) -> u32 {
    server.pid()
}

#[test]
fn a_tool_result_over_the_output_cap_is_cut_with_a_notice() {
    let tmp = tempfile::tempdir().unwrap();
    let out = built_copy(tmp.path());
    let server = HttpServer::start(&out, &["serve.max_output_bytes=300"], &[]);
    let (sid, _) = open_session(&server.addr);
    let call = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"cat","arguments":{"path":"entity_index.md"}}}"#;
    let (status, body) = request(&server.addr, &post(call, Some(&sid), None));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("[truncated: showing 300 of "), "{body}");
}

#[test]
fn a_session_over_the_request_rate_is_slowed_down() {
    let tmp = tempfile::tempdir().unwrap();
    let out = built_copy(tmp.path());
    let server = HttpServer::start(&out, &["serve.requests_per_second=2"], &[]);
    let (sid, _) = open_session(&server.addr);
    let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    let statuses: Vec<u16> = (0..8)
        .map(|_| request(&server.addr, &post(ping, Some(&sid), None)).0)
        .collect();
    assert!(statuses.contains(&429), "{statuses:?}");
    assert!(statuses.contains(&200), "{statuses:?}");
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(request(&server.addr, &post(ping, Some(&sid), None)).0, 200);
}

#[test]
fn the_server_refuses_to_start_without_what_it_needs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = built_copy(tmp.path());
    let o = out.to_str().unwrap();
    let r = c2s(tmp.path(), &["mcp", "--out", o, "--http", "0.0.0.0:0"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(
        stderr(&r).contains("without a token") && stderr(&r).contains("token_env"),
        "{}",
        stderr(&r)
    );
    let r = c2s(
        tmp.path(),
        &[
            "mcp",
            "--out",
            o,
            "--http",
            "127.0.0.1:0",
            "--set",
            "serve.token_env=\"C2S_UNSET_TOKEN_VAR\"",
        ],
    );
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("C2S_UNSET_TOKEN_VAR"), "{}", stderr(&r));
    let r = c2s(tmp.path(), &["mcp", "--out", o, "--http", "nowhere"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("HOST:PORT"), "{}", stderr(&r));
}

#[test]
fn sigterm_stops_the_server_cleanly_and_removes_its_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let out = built_copy(tmp.path());
    let mut server = HttpServer::start(&out, &[], &[]);
    let copies = || {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".c2s-serve-"))
            .count()
    };
    assert_eq!(copies(), 1);
    let st = Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let code = server.wait();
    assert_eq!(code, Some(0));
    assert_eq!(copies(), 0);
    assert!(server.log().iter().any(|l| l.contains("Stopping")));
}

use std::process::Command;
