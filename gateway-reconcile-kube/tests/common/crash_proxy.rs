//! `e2e-helper crash-proxy` between the controller binary and an API server: it forwards
//! the controller's requests as its own user, logs its writes, kills it at a chosen write
//! (`crash_points.rs`, `stale_reads.rs`) and drops or coalesces its watch events
//! (`unobserved.rs`).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use super::env;

/// The e2e helper that `e2e/controlplane.sh build` builds.
pub const HELPER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../e2e/controlplane/bin/e2e-helper"
);

/// One write request the proxy logged.
#[derive(Debug, Clone)]
pub struct Write {
    pub method: String,
    pub path: String,
    /// The API server's answer; `None` for a write the proxy did not send.
    pub code: Option<u16>,
}

impl Write {
    pub fn deployment(&self) -> bool {
        self.path.contains("/deployments")
    }

    pub fn accepted(&self) -> bool {
        self.code.is_some_and(|c| (200..300).contains(&c))
    }
}

impl std::fmt::Display for Write {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let code = self.code.map_or("-".to_owned(), |c| c.to_string());
        // The namespace differs from run to run; the resource does not.
        let path = self.path.rsplit("namespaces/").next().unwrap_or(&self.path);
        let path = path.split_once('/').map_or(path, |(_, rest)| rest);
        write!(f, "{} {path} {code}", self.method)
    }
}

/// `e2e-helper crash-proxy` in a process of its own, stopped when dropped.
pub struct Proxy {
    child: Child,
    /// Where it listens on loopback.
    pub port: u16,
    log: PathBuf,
}

impl Proxy {
    /// Forwards to `server` (the control plane's API server by default); with `kill`,
    /// SIGKILLs the process of `pid_file` at the k-th write, `after` its answer or
    /// `before` it is sent.
    pub fn start(
        kill: Option<(usize, &str)>,
        pid_file: &Path,
        log: &Path,
        server: Option<&str>,
    ) -> Proxy {
        let args = kill.map_or_else(Vec::new, |(k, mode)| {
            vec![
                "-kill-at".to_owned(),
                k.to_string(),
                "-mode".to_owned(),
                mode.to_owned(),
                "-pid-file".to_owned(),
                pid_file.to_string_lossy().into_owned(),
            ]
        });
        Proxy::with_args(&args, log, server)
    }

    /// Forwards to `server` (the control plane's API server by default) with `args` (its
    /// flags), writes logged to `log`, the perturbed watch events to `log` with the
    /// extension `events` (see [`Proxy::events`]).
    pub fn with_args(args: &[String], log: &Path, server: Option<&str>) -> Proxy {
        let mut command = Command::new(HELPER);
        command
            .arg("crash-proxy")
            .arg("-log")
            .arg(log)
            .arg("-event-log")
            .arg(log.with_extension("events"))
            .args(args);
        let errors = std::fs::File::create(log.with_extension("err")).expect("proxy stderr");
        let mut child = command
            .args([
                env("E2E_DIR"),
                server.map_or_else(|| env("E2E_SERVER"), str::to_owned),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(errors)
            .spawn()
            .expect("e2e-helper crash-proxy starts (e2e/controlplane.sh build)");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the proxy's first line");
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the proxy said {line:?}"));
        Proxy {
            child,
            port,
            log: log.to_owned(),
        }
    }

    /// Whether the kill is logged within `limit` (the proxy logs it once the signal is
    /// sent, so a killed process may be seen gone a moment before).
    pub async fn killed(&self, limit: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        while !self.writes().1 {
            if start.elapsed() > limit {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        true
    }

    /// The writes logged so far, in order, and whether the kill was done.
    pub fn writes(&self) -> (Vec<Write>, bool) {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let mut writes = Vec::new();
        let mut killed = false;
        for line in text.lines() {
            let words: Vec<&str> = line.split(' ').collect();
            match words.as_slice() {
                ["kill", ..] => killed = true,
                ["kill-failed", ..] => panic!("the proxy could not kill: {line}"),
                [_, method, path, code] => writes.push(Write {
                    method: (*method).to_owned(),
                    path: (*path).to_owned(),
                    code: code.parse().ok(),
                }),
                _ => panic!("a proxy log line: {line:?}"),
            }
        }
        (writes, killed)
    }

    /// The watch events it dropped and the ones it replaced by a later one of their object
    /// (coalesced), so far: one line each, "event N RESOURCE TYPE NAMESPACE/NAME RV WHAT".
    pub fn events(&self) -> Vec<String> {
        std::fs::read_to_string(self.log.with_extension("events"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A copy of `kubeconfig` whose server is the proxy (its certificate, from the same CA,
/// names 127.0.0.1).
pub fn kubeconfig_through(kubeconfig: &str, port: u16, path: &Path) -> String {
    let mut config: Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(kubeconfig).expect("kubeconfig"))
            .expect("yaml");
    for entry in config["clusters"].as_array_mut().into_iter().flatten() {
        entry["cluster"]["server"] = json!(format!("https://127.0.0.1:{port}"));
    }
    std::fs::write(path, serde_yaml_ng::to_string(&config).expect("yaml")).expect("write");
    path.to_string_lossy().into_owned()
}
