//! `gateway-reconcile-controller`: the Gateway controller that runs one LB Deployment per
//! Gateway. See the crate README.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use gateway_reconcile::{Settings, template};
use gateway_reconcile_kube::{controller, options};
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

    /// How many Gateways reconcile at once (0: no limit).
    #[arg(long, default_value_t = 8)]
    concurrency: u16,

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
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

fn read(path: &PathBuf) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

async fn client(args: &Args) -> Result<kube::Client, String> {
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
    gateway_reconcile_kube::controller::client(config).map_err(|e| e.to_string())
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
    let client = client(&args).await?;
    let config = controller::Config {
        settings,
        template,
        namespace: args.namespace.clone(),
        reporter: Reporter {
            controller: "gateway-reconcile-controller".into(),
            instance: args.instance.clone(),
        },
        concurrency: args.concurrency,
    };
    info!(namespace = ?config.namespace, controller_name = %config.settings.controller_name, "starting");
    controller::run(client, config, shutdown()).await;
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
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match args.log_format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    init_logs(&args);
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!("{e}");
            ExitCode::FAILURE
        }
    }
}
