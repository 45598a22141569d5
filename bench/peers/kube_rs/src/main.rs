//! The bench's kube-rs peer: the Uuid operator written the ordinary way on kube-rs, one `Controller` per
//! kubeconfig context, 16 concurrent reconciles each (kube-rs defaults otherwise).
//!
//! Reconcile: read the object the controller hands over (its reflector cache); when `status.uuid` is empty, send one
//! JSON merge patch carrying `metadata.resourceVersion` and `status {uuid, state: Ok, message}`, to `/status` when the
//! CRD has the status subresource, else to the object itself (the seed article's CRD). A 409 requeues the object.
//!
//! Usage: uuid_peer_kube_rs [--kubeconfig FILE] [--contexts a,b] [--namespace NS] [--context-namespace true|false]
//!                          [--status-subresource true|false] [--concurrency N] [--group G] [--version V]
//!                          [--plural P] [--kind K]
//! Without --contexts every context of the kubeconfig runs; without --namespace all namespaces are watched; with
//! `--context-namespace true` each context watches its own kubeconfig namespace (the bench's tenant contexts).
//! Prints `synced <context>` on stderr once a context's first list is in the cache; exits on SIGTERM or SIGINT.

use std::{sync::Arc, time::Duration};

use futures::{StreamExt, future::join_all};
use kube::{
    Client, Config,
    api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams},
    config::{KubeConfigOptions, Kubeconfig},
    runtime::{
        controller::{Action, Config as ControllerConfig, Controller},
        watcher,
    },
};

const MESSAGE: &str = "UUID assigned by the kube-rs peer";

struct Options {
    kubeconfig: String,
    contexts: Vec<String>,
    namespace: Option<String>,
    context_namespace: bool,
    status_subresource: bool,
    concurrency: u16,
    group: String,
    version: String,
    plural: String,
    kind: String,
}

struct Context {
    client: Client,
    resource: ApiResource,
    status_subresource: bool,
}

#[derive(Debug)]
struct ReconcileError(kube::Error);

impl std::fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "patching the Uuid failed: {}", self.0)
    }
}

impl std::error::Error for ReconcileError {}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        kubeconfig: "clusters/local.yaml".into(),
        contexts: Vec::new(),
        namespace: None,
        context_namespace: false,
        status_subresource: true,
        concurrency: 16,
        group: "demo.operator".into(),
        version: "v1".into(),
        plural: "uuid".into(),
        kind: "Uuid".into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("flag {flag} needs a value"))?;
        match flag.as_str() {
            "--kubeconfig" => options.kubeconfig = value,
            "--contexts" => options.contexts = value.split(',').filter(|s| !s.is_empty()).map(String::from).collect(),
            "--namespace" => options.namespace = Some(value),
            "--context-namespace" => {
                options.context_namespace = match value.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(format!("--context-namespace must be true or false, got {value:?}")),
                }
            }
            "--status-subresource" => {
                options.status_subresource = match value.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(format!("--status-subresource must be true or false, got {value:?}")),
                }
            }
            "--concurrency" => {
                options.concurrency = value
                    .parse()
                    .map_err(|_| format!("--concurrency must be a positive integer, got {value:?}"))?
            }
            "--group" => options.group = value,
            "--version" => options.version = value,
            "--plural" => options.plural = value,
            "--kind" => options.kind = value,
            _ => {
                return Err(format!(
                    "unknown flag {flag:?}; valid: --kubeconfig --contexts --namespace --context-namespace \
                     --status-subresource --concurrency --group --version --plural --kind"
                ));
            }
        }
    }
    Ok(options)
}

fn uuid_is_empty(object: &DynamicObject) -> bool {
    match object.data.get("status").and_then(|status| status.get("uuid")) {
        None | Some(serde_json::Value::Null) => true,
        Some(serde_json::Value::String(uuid)) => uuid.is_empty(),
        Some(_) => false,
    }
}

async fn reconcile(object: Arc<DynamicObject>, context: Arc<Context>) -> Result<Action, ReconcileError> {
    if !uuid_is_empty(&object) {
        return Ok(Action::await_change());
    }
    let name = object.metadata.name.clone().unwrap_or_default();
    let namespace = object.metadata.namespace.clone().unwrap_or_default();
    let api: Api<DynamicObject> = Api::namespaced_with(context.client.clone(), &namespace, &context.resource);
    let patch = serde_json::json!({
        "metadata": { "resourceVersion": object.metadata.resource_version },
        "status": { "uuid": uuid::Uuid::new_v4().to_string(), "state": "Ok", "message": MESSAGE },
    });
    let params = PatchParams::default();
    let result = if context.status_subresource {
        api.patch_status(&name, &params, &Patch::Merge(&patch)).await
    } else {
        api.patch(&name, &params, &Patch::Merge(&patch)).await
    };
    match result {
        Ok(_) => Ok(Action::await_change()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Action::requeue(Duration::from_millis(50))),
        Err(error) => Err(ReconcileError(error)),
    }
}

fn error_policy(_object: Arc<DynamicObject>, error: &ReconcileError, _context: Arc<Context>) -> Action {
    eprintln!("{error}");
    Action::requeue(Duration::from_secs(1))
}

async fn run_context(kubeconfig: Kubeconfig, name: String, options: Arc<Options>) -> Result<(), String> {
    let config_options = KubeConfigOptions { context: Some(name.clone()), ..KubeConfigOptions::default() };
    let config = Config::from_custom_kubeconfig(kubeconfig, &config_options)
        .await
        .map_err(|error| format!("context {name}: kubeconfig is unusable: {error}"))?;
    let client = Client::try_from(config).map_err(|error| format!("context {name}: no client: {error}"))?;
    let gvk = GroupVersionKind::gvk(&options.group, &options.version, &options.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, &options.plural);
    let api: Api<DynamicObject> = match &options.namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None if options.context_namespace => Api::default_namespaced_with(client.clone(), &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let context = Arc::new(Context { client, resource: resource.clone(), status_subresource: options.status_subresource });
    let controller = Controller::new_with(api, watcher::Config::default(), resource)
        .with_config(ControllerConfig::default().concurrency(options.concurrency))
        .shutdown_on_signal();
    let store = controller.store();
    let synced = async move {
        if store.wait_until_ready().await.is_ok() {
            eprintln!("synced {name}");
        }
    };
    let run = controller.run(reconcile, error_policy, context).for_each(|_| futures::future::ready(()));
    futures::join!(synced, run);
    Ok(())
}

/// The part of `kubeconfig` that context `name` uses (that context, its cluster and its user): what each context's
/// client is built from, so a kubeconfig of N contexts is not cloned N times (N² memory at a thousand contexts).
fn context_kubeconfig(kubeconfig: &Kubeconfig, name: &str) -> Kubeconfig {
    let context = kubeconfig.contexts.iter().find(|c| c.name == name).cloned();
    let inner = context.as_ref().and_then(|c| c.context.as_ref());
    let cluster = inner.map(|c| c.cluster.as_str());
    let user = inner.and_then(|c| c.user.as_deref());
    Kubeconfig {
        clusters: kubeconfig.clusters.iter().filter(|c| Some(c.name.as_str()) == cluster).cloned().collect(),
        auth_infos: kubeconfig.auth_infos.iter().filter(|u| Some(u.name.as_str()) == user).cloned().collect(),
        contexts: context.into_iter().collect(),
        current_context: Some(name.to_string()),
        ..Kubeconfig::default()
    }
}

#[tokio::main]
async fn main() {
    let options = match parse_options() {
        Ok(options) => Arc::new(options),
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let kubeconfig = match Kubeconfig::read_from(&options.kubeconfig) {
        Ok(kubeconfig) => kubeconfig,
        Err(error) => {
            eprintln!("cannot read kubeconfig {}: {error}", options.kubeconfig);
            std::process::exit(2);
        }
    };
    let known: Vec<String> = kubeconfig.contexts.iter().map(|context| context.name.clone()).collect();
    let names = if options.contexts.is_empty() { known.clone() } else { options.contexts.clone() };
    if let Some(missing) = names.iter().find(|name| !known.contains(name)) {
        eprintln!("context {missing:?} is not in kubeconfig {}; valid: {}", options.kubeconfig, known.join(", "));
        std::process::exit(2);
    }
    if names.is_empty() {
        eprintln!("kubeconfig {} has no contexts", options.kubeconfig);
        std::process::exit(2);
    }
    let runs = names.into_iter().map(|name| run_context(context_kubeconfig(&kubeconfig, &name), name, options.clone()));
    for result in join_all(runs).await {
        if let Err(message) = result {
            eprintln!("{message}");
        }
    }
}
