//! Names between the scenario file and the real server: each scenario's namespaces are
//! the server's (named `replay-` and a generated suffix), its GatewayClasses carry a
//! per-scenario suffix, and the uids a file gives are kept beside the server's; an object
//! goes to the server in the server's names and comes back in the file's, so that the core
//! sees the file's names and uids.

use gateway_reconcile::lookup;
use gateway_reconcile::sim::cluster::Kind;
use kube::ResourceExt;
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::{Value, json};

use super::{Real, Step, api_text, ar, dynamic, failed, str_at};

impl Real {
    /// The server's namespace for the file's `namespace` (created at first use).
    pub(super) async fn real_namespace(&mut self, namespace: &str) -> Step<String> {
        if let Some(real) = self.namespaces.get(namespace) {
            return Ok(real.clone());
        }
        let api: Api<DynamicObject> =
            Api::all_with(self.admin.clone(), &ar("v1", "Namespace", "namespaces"));
        let created = api
            .create(
                &PostParams::default(),
                &dynamic(json!({ "apiVersion": "v1", "kind": "Namespace",
                                 "metadata": { "generateName": "replay-" } }))?,
            )
            .await
            .or_else(|e| failed(format!("namespace: {}", api_text(&e))))?;
        let real = created.name_any();
        if self.suffix.is_empty() {
            self.suffix = real.clone();
        }
        self.namespaces.insert(namespace.to_owned(), real.clone());
        Ok(real)
    }

    pub(super) fn class_on_server(&self, name: &str) -> String {
        format!("{name}.{}", self.suffix)
    }

    fn class_in_file<'a>(&self, name: &'a str) -> &'a str {
        name.strip_suffix(&format!(".{}", self.suffix))
            .unwrap_or(name)
    }

    /// The file's object as the server stores it: namespace and class name translated.
    pub(super) async fn server_form(&mut self, kind: Kind, mut object: Value) -> Step<Value> {
        if kind == Kind::GatewayClass {
            if let Some(name) = str_at(&object, "/metadata/name").map(str::to_owned) {
                object["metadata"]["name"] = json!(self.class_on_server(&name));
            }
            // A class's default configuration lives in a namespace of the file's.
            if let Some(ns) = str_at(&object, "/spec/parametersRef/namespace").map(str::to_owned) {
                object["spec"]["parametersRef"]["namespace"] =
                    json!(self.real_namespace(&ns).await?);
            }
            return Ok(object);
        }
        let ns = str_at(&object, "/metadata/namespace")
            .map(str::to_owned)
            .unwrap_or_else(|| self.gateway_namespace.clone());
        let real = self.real_namespace(&ns).await?;
        object["metadata"]["namespace"] = json!(real);
        // A route's parents in another namespace name it: the server's name, so that the
        // controller's read (which filters routes by the Gateway they name) finds it.
        if kind == Kind::Routes
            && let Some(parents) = object
                .pointer_mut("/spec/parentRefs")
                .and_then(Value::as_array_mut)
        {
            for parent in parents {
                if let Some(ns) = str_at(parent, "/namespace").map(str::to_owned) {
                    parent["namespace"] = json!(self.real_namespace(&ns).await?);
                }
            }
        }
        if kind == Kind::Gateway
            && let Some(class) = str_at(&object, "/spec/gatewayClassName").map(str::to_owned)
        {
            object["spec"]["gatewayClassName"] = json!(self.class_on_server(&class));
        }
        Ok(object)
    }

    /// The file's name of a namespace of the server's.
    pub(super) fn file_namespace(&self, real: &str) -> Option<String> {
        self.namespaces
            .iter()
            .find(|(_, r)| r.as_str() == real)
            .map(|(file, _)| file.clone())
    }

    /// The server's object as the file names it.
    pub(super) fn file_form(&self, kind: Kind, mut object: Value) -> Value {
        match kind {
            Kind::GatewayClass => {
                if let Some(name) = str_at(&object, "/metadata/name").map(str::to_owned) {
                    object["metadata"]["name"] = json!(self.class_in_file(&name));
                }
                if let Some(file) = str_at(&object, "/spec/parametersRef/namespace")
                    .and_then(|real| self.file_namespace(real))
                {
                    object["spec"]["parametersRef"]["namespace"] = json!(file);
                }
            }
            _ => {
                if let Some(ns) = str_at(&object, "/metadata/namespace").map(str::to_owned)
                    && let Some((file, _)) = self.namespaces.iter().find(|(_, real)| **real == ns)
                {
                    object["metadata"]["namespace"] = json!(file);
                }
                if let Some(file) = str_at(&object, "/metadata/uid").and_then(|u| self.uids.get(u))
                {
                    object["metadata"]["uid"] = json!(file);
                }
                if kind == Kind::Routes
                    && let Some(parents) = object
                        .pointer_mut("/spec/parentRefs")
                        .and_then(Value::as_array_mut)
                {
                    for parent in parents {
                        if let Some(file) =
                            str_at(parent, "/namespace").and_then(|real| self.file_namespace(real))
                        {
                            parent["namespace"] = json!(file);
                        }
                    }
                }
                if kind == Kind::Gateway {
                    object["metadata"]["uid"] = json!(self.gateway_uid);
                    if let Some(class) =
                        str_at(&object, "/spec/gatewayClassName").map(str::to_owned)
                    {
                        object["spec"]["gatewayClassName"] = json!(self.class_in_file(&class));
                    }
                }
            }
        }
        object
    }

    pub(super) fn name_of(&self, kind: Kind) -> Step<String> {
        match kind {
            Kind::Gateway => Ok(self.gateway_name.clone()),
            Kind::Deployment => Ok(lookup::deployment_name(&self.settings, &self.gateway_name)),
            Kind::Configuration => Ok(self.configuration_name().unwrap_or_default()),
            Kind::GatewayClass => Ok(self.class_name.clone()),
            Kind::Template | Kind::Routes => failed(format!("{kind} has no name")),
        }
    }

    fn configuration_name(&self) -> Option<String> {
        self.configuration_name.clone()
    }
}
