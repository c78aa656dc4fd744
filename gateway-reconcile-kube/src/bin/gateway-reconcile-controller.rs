//! `gateway-reconcile-controller`: the Gateway controller that runs one LB Deployment per
//! Gateway. See the crate README.
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{ArgAction, Parser, ValueEnum};
use gateway_reconcile::{Settings, template};
use gateway_reconcile_kube::controller::{self, ClientOptions, Operations};
use gateway_reconcile_kube::health::Health;
use gateway_reconcile_kube::leader::{self, Elector, Leadership, LeaseConfig};
use gateway_reconcile_kube::metrics::{self, Metrics};
use gateway_reconcile_kube::{options, serve};
use kube::runtime::events::Reporter;
use tracing::{error, info};

/// Runs the Gateway controller: one load-balancer Deployment per Gateway of a GatewayClass
/// whose controllerName is ours, with a Gateway status that says which
/// GatewayConfiguration generation the running Deployment carries.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Kubeconfig file. Without it: $KUBECONFIG, then ~/.kube/config, then the in-cluster
    /// service account.
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,

    /// Kubeconfig context (default: the current context).
    #[arg(long, value_name = "NAME")]
    context: Option<String>,

    /// Settings file, JSON or YAML, with the core's camelCase keys (controllerName,
    /// deploymentPrefix, degradedAfter, resync, ...); every key is optional and defaults to
    /// the Meridio-2 value.
    #[arg(long, value_name = "FILE")]
    settings: Option<PathBuf>,

    /// LB Deployment template file, JSON or YAML (default: the built-in template with the
    /// `loadbalancer` and `router` containers).
    #[arg(long, value_name = "FILE")]
    template: Option<PathBuf>,

    /// Watch only this namespace (Gateways, GatewayConfigurations, L34Routes, Deployments);
    /// default: the whole cluster.
    #[arg(long, value_name = "NAMESPACE")]
    namespace: Option<String>,

    /// How many Gateways reconcile at once (0: no limit). 64 started 5,000 Gateways sooner
    /// than 8 in the scale harness's runs (docs/scale.md); over HTTP/1.1 each request in
    /// flight holds a connection of its own, so a lower value opens fewer.
    #[arg(long, default_value_t = 64)]
    concurrency: u16,

    /// Threads that run the controller: 1 runs everything on one thread; N > 1, a runtime
    /// of N worker threads; 0, one worker per CPU core. One thread spent a third less CPU
    /// than two workers over the start of 5,000 Gateways on two cores, which converged as
    /// fast (docs/scale.md): the controller's work hands off between tasks often, and each
    /// hand-off between threads costs a wake-up. More threads suit a controller whose
    /// reconciles outgrow one core.
    #[arg(long, default_value_t = 1, value_name = "N")]
    threads: u16,

    /// The watches' initial lists as streaming lists (a `watch` with
    /// `sendInitialEvents=true`, served by Kubernetes 1.32 and later; a watch the server
    /// refuses them for falls back to paged LISTs) instead of paged LISTs.
    /// `--streaming-lists=false`: paged LISTs only.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", value_name = "BOOL")]
    streaming_lists: bool,

    /// The reporting instance of the Events (e.g. the Pod name).
    #[arg(long, env = "POD_NAME", value_name = "NAME")]
    instance: Option<String>,

    /// Log format: `text` for people, `json` for log collectors.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,

    /// Log filter (tracing's env-filter syntax, e.g. `info` or
    /// `gateway_reconcile_kube=debug,info`); $RUST_LOG wins when set.
    #[arg(long, default_value = "info")]
    log: String,

    /// Address of `/healthz` and `/readyz` (`0`: not served).
    #[arg(long, default_value = "0.0.0.0:8081", value_name = "ADDR")]
    health_addr: String,

    /// Address of `/metrics`, Prometheus text (`0`: not served).
    #[arg(long, default_value = "0.0.0.0:8080", value_name = "ADDR")]
    metrics_addr: String,

    /// Leader election on a Lease: one replica reconciles, the others keep warm caches
    /// and write nothing. `--leader-elect=false` for a single replica.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", value_name = "BOOL")]
    leader_elect: bool,

    /// Namespace of the Lease (default: $POD_NAMESPACE, then the service account's
    /// namespace; required outside a Pod).
    #[arg(long, env = "POD_NAMESPACE", value_name = "NAMESPACE")]
    leader_election_namespace: Option<String>,

    /// Name of the Lease.
    #[arg(
        long,
        default_value = "gateway-reconcile-controller",
        value_name = "NAME"
    )]
    leader_election_id: String,

    /// How long a standby waits after the leader's last renewal before it takes over.
    #[arg(long, default_value = "15s", value_parser = duration, value_name = "DURATION")]
    leader_elect_lease_duration: Duration,

    /// How long the leader keeps writing after its last successful renewal (shorter than
    /// the lease duration: it stops before it can be replaced).
    #[arg(long, default_value = "10s", value_parser = duration, value_name = "DURATION")]
    leader_elect_renew_deadline: Duration,

    /// How often candidates read the Lease and the leader renews it.
    #[arg(long, default_value = "2s", value_parser = duration, value_name = "DURATION")]
    leader_elect_retry_period: Duration,

    /// How long the watch caches may take to get their initial lists; past it the process
    /// exits non-zero, naming the resource and its last watch error.
    #[arg(long, default_value = "2m", value_parser = duration, value_name = "DURATION")]
    cache_sync_timeout: Duration,

    /// Client-side rate limit: requests a second to the API server after a burst (≤ 0:
    /// no limit).
    #[arg(long, default_value_t = controller::DEFAULT_QPS)]
    qps: f32,

    /// Client-side rate limit: requests that may go at once.
    #[arg(long, default_value_t = controller::DEFAULT_BURST)]
    burst: u32,
}

fn duration(text: &str) -> Result<Duration, String> {
    gateway_reconcile::parse_duration(text)
}

/// An endpoint address, or `None` for `0`.
fn endpoint(flag: &str, value: &str) -> Result<Option<SocketAddr>, String> {
    if value == "0" {
        return Ok(None);
    }
    value
        .parse()
        .map(Some)
        .map_err(|e| format!("--{flag} {value}: {e}"))
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

fn read(path: &PathBuf) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

async fn kube_config(args: &Args) -> Result<kube::Config, String> {
    let config = match &args.kubeconfig {
        Some(path) => {
            let kubeconfig = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let options = kube::config::KubeConfigOptions {
                context: args.context.clone(),
                ..Default::default()
            };
            kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| e.to_string())?
        }
        None if args.context.is_some() => {
            let options = kube::config::KubeConfigOptions {
                context: args.context.clone(),
                ..Default::default()
            };
            kube::Config::from_kubeconfig(&options)
                .await
                .map_err(|e| e.to_string())?
        }
        None => kube::Config::infer().await.map_err(|e| e.to_string())?,
    };
    Ok(config)
}

async fn run(args: Args) -> Result<(), String> {
    let settings = match &args.settings {
        Some(path) => options::settings(&path.display().to_string(), &read(path)?)
            .map_err(|e| e.to_string())?,
        None => Settings::default(),
    };
    let template = match &args.template {
        Some(path) => options::template(&path.display().to_string(), &read(path)?)
            .map_err(|e| e.to_string())?,
        None => template::default_template(),
    };
    let health_addr = endpoint("health-addr", &args.health_addr)?;
    let metrics_addr = endpoint("metrics-addr", &args.metrics_addr)?;
    let kube_config = kube_config(&args).await?;
    let metrics = Arc::new(Metrics::new());
    let health = Arc::new(Health::default());

    // Leader election: the identity names the Pod, and is the requests' User-Agent too, so
    // that the API server's audit log tells the replicas apart.
    let identity = leader::identity(args.instance.as_deref());
    let user_agent = format!(
        "gateway-reconcile-controller/{} ({identity})",
        env!("CARGO_PKG_VERSION")
    );
    let (leadership, elector) = if args.leader_elect {
        let lease = LeaseConfig {
            namespace: leader::namespace(args.leader_election_namespace.as_deref())
                .map_err(|e| e.to_string())?,
            name: args.leader_election_id.clone(),
            identity: identity.clone(),
            lease_duration: args.leader_elect_lease_duration,
            renew_deadline: args.leader_elect_renew_deadline,
            retry_period: args.leader_elect_retry_period,
        };
        lease.check().map_err(|e| e.to_string())?;
        // The Lease has a client of its own: not gated (it is written before the gate
        // opens), not rate limited behind the controller's requests.
        let lease_client = controller::client_with(
            kube_config.clone(),
            ClientOptions {
                qps: 0.0,
                metrics: metrics.clone(),
                user_agent: Some(user_agent.clone()),
                ..ClientOptions::default()
            },
        )
        .map_err(|e| e.to_string())?;
        let leadership = Leadership::candidate();
        let elector =
            Elector::new(lease_client, lease, leadership.clone()).map_err(|e| e.to_string())?;
        (leadership, Some(elector))
    } else {
        (Leadership::always(), None)
    };
    let client = controller::client_with(
        kube_config,
        ClientOptions {
            qps: args.qps,
            burst: args.burst,
            metrics: metrics.clone(),
            leadership: leadership.clone(),
            user_agent: Some(user_agent),
        },
    )
    .map_err(|e| e.to_string())?;

    // The endpoints are bound before anything starts: a taken port stops the process.
    if let Some(addr) = health_addr {
        let listener = serve::bind(addr)
            .await
            .map_err(|e| format!("--health-addr {addr}: {e}"))?;
        let health = health.clone();
        let handler: serve::Handler = Arc::new(move |path| {
            health
                .probe(path)
                .map(|(code, body)| (code, "text/plain; charset=utf-8", body))
        });
        tokio::spawn(serve::serve(listener, handler));
        info!(%addr, "serving /healthz and /readyz");
    }
    if let Some(addr) = metrics_addr {
        let listener = serve::bind(addr)
            .await
            .map_err(|e| format!("--metrics-addr {addr}: {e}"))?;
        let metrics = metrics.clone();
        let handler: serve::Handler = Arc::new(move |path| {
            (path == "/metrics").then(|| (200, metrics::CONTENT_TYPE, metrics.encode()))
        });
        tokio::spawn(serve::serve(listener, handler));
        info!(%addr, "serving /metrics");
    }

    let config = controller::Config {
        settings,
        template,
        namespace: args.namespace.clone(),
        reporter: Reporter {
            controller: "gateway-reconcile-controller".into(),
            instance: args.instance.clone(),
        },
        concurrency: args.concurrency,
        streaming_lists: args.streaming_lists,
    };
    info!(namespace = ?config.namespace, controller_name = %config.settings.controller_name,
          %identity, leader_elect = args.leader_elect, streaming_lists = args.streaming_lists, "starting");
    let operations = Operations {
        metrics,
        health,
        leadership,
        elector,
        cache_sync_timeout: args.cache_sync_timeout,
    };
    controller::run_with(client, config, operations, shutdown())
        .await
        .map_err(|e| e.to_string())?;
    info!("stopped");
    Ok(())
}

/// Completes on SIGTERM (what the kubelet sends) or Ctrl-C; the controller then finishes
/// the reconciles in flight.
async fn shutdown() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
    info!("shutting down");
}

fn init_logs(args: &Args) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(&args.log))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colours only for a terminal: a log file or a collector gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi);
    match args.log_format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

/// The async runtime of `--threads`.
fn runtime(threads: u16) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = match threads {
        1 => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    if threads > 1 {
        builder.worker_threads(threads.into());
    }
    builder.enable_all().build()
}

fn main() -> ExitCode {
    let args = Args::parse();
    init_logs(&args);
    let runtime = match runtime(args.threads) {
        Ok(runtime) => runtime,
        Err(e) => {
            error!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!("{e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_flags_have_controller_runtimes_defaults() {
        let args = Args::try_parse_from(["gateway-reconcile-controller"]).expect("defaults");
        assert!(args.leader_elect);
        assert_eq!(args.health_addr, "0.0.0.0:8081");
        assert_eq!(args.metrics_addr, "0.0.0.0:8080");
        assert_eq!(args.leader_election_id, "gateway-reconcile-controller");
        assert_eq!(args.leader_elect_lease_duration, Duration::from_secs(15));
        assert_eq!(args.leader_elect_renew_deadline, Duration::from_secs(10));
        assert_eq!(args.leader_elect_retry_period, Duration::from_secs(2));
        assert_eq!(args.cache_sync_timeout, Duration::from_secs(120));
        assert_eq!(
            (args.qps, args.burst),
            (0.0, 30),
            "no client-side limit by default"
        );
    }

    #[test]
    fn one_thread_by_default_and_workers_on_request() {
        use tokio::runtime::RuntimeFlavor;
        let args = Args::try_parse_from(["c"]).expect("defaults");
        assert_eq!(args.threads, 1);
        let one = runtime(1).expect("one thread");
        assert_eq!(one.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
        let args = Args::try_parse_from(["c", "--threads", "3"]).expect("parse");
        let three = runtime(args.threads).expect("three workers");
        assert_eq!(three.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
        assert_eq!(three.metrics().num_workers(), 3);
        let cores = runtime(0).expect("one worker per core");
        assert_eq!(cores.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
        // tokio's count of cores, which $TOKIO_WORKER_THREADS overrides.
        if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
            assert_eq!(
                cores.metrics().num_workers(),
                std::thread::available_parallelism().map_or(1, usize::from)
            );
        }
    }

    #[test]
    fn leader_election_can_be_turned_off_and_endpoints_disabled() {
        for off in [
            &["--leader-elect=false"][..],
            &["--leader-elect", "false"][..],
        ] {
            let args = Args::try_parse_from(["c"].iter().chain(off)).expect("parse");
            assert!(!args.leader_elect, "{off:?}");
        }
        let args = Args::try_parse_from(["c", "--leader-elect"]).expect("parse");
        assert!(args.leader_elect);
        assert_eq!(endpoint("metrics-addr", "0"), Ok(None));
        assert_eq!(
            endpoint("health-addr", "127.0.0.1:9"),
            Ok(Some("127.0.0.1:9".parse().expect("addr")))
        );
        assert!(endpoint("health-addr", "nowhere").is_err());
        let args = Args::try_parse_from(["c", "--cache-sync-timeout", "90s"]).expect("parse");
        assert_eq!(args.cache_sync_timeout, Duration::from_secs(90));
        assert!(Args::try_parse_from(["c", "--leader-elect-lease-duration", "soon"]).is_err());
    }
}
