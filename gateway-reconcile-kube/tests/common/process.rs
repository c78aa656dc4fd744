//! The controller binary in a process of its own, and the signals a story sends it.

use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::{BINARY, World, env};

/// A free port on loopback.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Sends `signal` (`-STOP`, `-CONT`, `-TERM`, `-KILL`) to `pid`.
pub fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill {signal} {pid}");
}

/// The controller binary in a process of its own, killed when dropped; its output goes
/// to `<namespace>-<name>.log` in `E2E_DIR`.
pub struct Process {
    /// Its Pod name (`POD_NAME`, the leader identity's prefix).
    pub name: String,
    child: Child,
    /// Where `/healthz` and `/readyz` are served.
    pub health: std::net::SocketAddr,
    /// Where `/metrics` is served.
    pub metrics: std::net::SocketAddr,
    log: std::path::PathBuf,
}

impl Process {
    /// Starts the binary as `name` for `world`'s namespace, with `kubeconfig`, probes and
    /// metrics on free loopback ports, and `extra` flags. Its log filter is
    /// `E2E_CONTROLLER_LOG`, by default the controller's debug lines and others' info.
    pub fn start(world: &World, name: &str, kubeconfig: &str, extra: &[&str]) -> Process {
        let health: std::net::SocketAddr =
            format!("127.0.0.1:{}", free_port()).parse().expect("addr");
        // Two ports free one after the other can be the same one.
        let metrics_port = std::iter::repeat_with(free_port)
            .find(|port| *port != health.port())
            .expect("a second free port");
        let metrics: std::net::SocketAddr =
            format!("127.0.0.1:{metrics_port}").parse().expect("addr");
        let log = std::path::PathBuf::from(env("E2E_DIR")).join(format!("{}-{name}.log", world.ns));
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(BINARY)
            .args(["--kubeconfig", kubeconfig, "--namespace", &world.ns])
            .args(["--health-addr", &health.to_string()])
            .args(["--metrics-addr", &metrics.to_string()])
            .args(extra)
            .env("POD_NAME", name)
            .env(
                "RUST_LOG",
                std::env::var("E2E_CONTROLLER_LOG")
                    .unwrap_or_else(|_| "info,gateway_reconcile_kube=debug".to_owned()),
            )
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .spawn()
            .expect("the controller binary starts");
        Process {
            name: name.to_owned(),
            child,
            health,
            metrics,
            log,
        }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends it `signal` (see [`signal`]).
    pub fn signal(&self, signal: &str) {
        self::signal(self.pid(), signal);
    }

    /// What it has logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Its exit status, if it has exited (reaped then).
    pub fn try_exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("wait")
    }

    /// Waits at most `limit` until its `/readyz` answers 200 (every watch cache has its
    /// initial list); fails at once if it exits.
    pub async fn ready(&mut self, limit: Duration) {
        if let Some(status) = self.ready_or_exited(limit).await {
            panic!("{} exited ({status}); its log:\n{}", self.name, self.log());
        }
    }

    /// [`Process::ready`], except that an exit ends the wait: its exit status then.
    pub async fn ready_or_exited(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        while super::loopback::http_status(self.health, "/readyz") != Some(200) {
            if let Some(status) = self.try_exited() {
                return Some(status);
            }
            assert!(
                start.elapsed() < limit,
                "{} not ready after {limit:?}; its log:\n{}",
                self.name,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }

    /// Waits at most `limit` for it to exit; its exit status.
    pub async fn exited(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "{} still runs after {limit:?}; its log:\n{}",
                self.name,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGTERM (unless it has exited), and its exit status within 30 s.
    pub async fn stop(&mut self) -> ExitStatus {
        if let Ok(Some(status)) = self.child.try_wait() {
            return status;
        }
        self.signal("-TERM");
        self.exited(Duration::from_secs(30)).await
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
