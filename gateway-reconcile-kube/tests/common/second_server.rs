//! A second kube-apiserver over the control plane's etcd, with the first's flags but its
//! own port and audit log, reaching etcd through `e2e-helper hold-proxy`: once held, it
//! serves reads from a watch cache that no longer follows etcd (a stale view), and its
//! writes wait until released. Both processes are killed when it is dropped.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use kube::Client;

use super::{HELPER, WAIT, env, free_port, kubeconfig_through, signal};

pub struct SecondServer {
    apiserver: Child,
    hold: Child,
    said: BufReader<ChildStdout>,
    /// Its URL (the first's certificate names 127.0.0.1, whatever the port).
    pub url: String,
    /// Its port on loopback.
    pub port: u16,
    /// The admin, on this server.
    pub admin: Client,
    log: PathBuf,
}

impl SecondServer {
    /// Starts it (`name` names its log, `<name>-apiserver.log` in `E2E_DIR`, and audit
    /// log) and waits until it is ready.
    pub async fn start(name: &str) -> SecondServer {
        let dir = PathBuf::from(env("E2E_DIR"));
        // The first's flags, one a line (`e2e/controlplane.sh` saves them).
        let args = std::fs::read_to_string(dir.join("kube-apiserver.args"))
            .expect("the first kube-apiserver's flags");
        let mut args: Vec<String> = args.lines().map(str::to_owned).collect();
        let etcd = value_of(&args, "--etcd-servers");
        let etcd = etcd.trim_start_matches("http://").to_owned();
        let mut hold = Command::new(HELPER)
            .args(["hold-proxy", "127.0.0.1:0", &etcd])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("e2e-helper hold-proxy starts (e2e/controlplane.sh build)");
        let mut said = BufReader::new(hold.stdout.take().expect("stdout"));
        let listening = read_line(&mut said);
        let through = listening
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("hold-proxy said {listening:?}"))
            .to_owned();
        let port = free_port();
        set(&mut args, "--etcd-servers", &format!("http://{through}"));
        set(&mut args, "--secure-port", &port.to_string());
        let audit = dir.join(format!("{name}-audit.log"));
        set(&mut args, "--audit-log-path", &audit.to_string_lossy());
        let log = dir.join(format!("{name}-apiserver.log"));
        let file = std::fs::File::create(&log).expect("log");
        let apiserver = Command::new(
            PathBuf::from(HELPER)
                .parent()
                .expect("bin")
                .join("kube-apiserver"),
        )
        .args(&args)
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("log"))
        .stderr(file)
        .spawn()
        .expect("kube-apiserver starts");
        let url = format!("https://127.0.0.1:{port}");
        let kubeconfig = kubeconfig_through(
            &env("KUBECONFIG"),
            port,
            &dir.join(format!("{name}.kubeconfig")),
        );
        let config = kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::read_from(&kubeconfig).expect("kubeconfig"),
            &Default::default(),
        )
        .await
        .expect("config");
        let mut server = SecondServer {
            apiserver,
            hold,
            said,
            url,
            port,
            admin: Client::try_from(config).expect("client"),
            log,
        };
        server.ready(&dir);
        server
    }

    /// Waits until its `/readyz` answers 200 (its caches, custom resources' included,
    /// are synced); fails at once if it exits.
    fn ready(&mut self, dir: &std::path::Path) {
        let start = Instant::now();
        loop {
            let probe = Command::new(HELPER)
                .args(["probe", &format!("{}/readyz", self.url)])
                .arg(dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("e2e-helper probe");
            if probe.success() {
                return;
            }
            if let Some(status) = self.apiserver.try_wait().expect("wait") {
                panic!(
                    "the second kube-apiserver exited ({status}): {}",
                    self.log_tail()
                );
            }
            assert!(
                start.elapsed() < WAIT,
                "the second kube-apiserver not ready in {WAIT:?}: {}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Holds its link to etcd: returns once no byte passes.
    pub fn hold(&mut self) {
        signal(self.hold.id(), "-USR1");
        let said = read_line(&mut self.said);
        assert_eq!(said, "held", "hold-proxy");
    }

    /// Lets the bytes pass again.
    pub fn release(&mut self) {
        signal(self.hold.id(), "-USR2");
        let said = read_line(&mut self.said);
        assert_eq!(said, "released", "hold-proxy");
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for SecondServer {
    fn drop(&mut self) {
        for child in [&mut self.apiserver, &mut self.hold] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn read_line(from: &mut BufReader<ChildStdout>) -> String {
    let mut line = String::new();
    from.read_line(&mut line).expect("hold-proxy's output");
    line.trim().to_owned()
}

/// The value of `flag` (the next line).
fn value_of(args: &[String], flag: &str) -> String {
    let at = args
        .iter()
        .position(|a| a == flag)
        .unwrap_or_else(|| panic!("no {flag}"));
    args[at + 1].clone()
}

fn set(args: &mut [String], flag: &str, value: &str) {
    let at = args
        .iter()
        .position(|a| a == flag)
        .unwrap_or_else(|| panic!("no {flag}"));
    args[at + 1] = value.to_owned();
}
