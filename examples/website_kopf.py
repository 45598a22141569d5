import kopf
import kubernetes

GROUP, VERSION, PLURAL = "examples.operator-hub.dev", "v1", "websites"


def children(name, spec):
    labels = {"app": name}
    return [
        ("v1", "ConfigMap", {"metadata": {"name": name}, "data": {"index.html": spec.get("content", "")}}),
        ("apps/v1", "Deployment", {"metadata": {"name": name}, "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [{"name": "web", "image": spec["image"]}]}}}}),
        ("v1", "Service", {"metadata": {"name": name}, "spec": {"selector": labels, "ports": [{"port": 80}]}}),
    ]


@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.resume(GROUP, VERSION, PLURAL)
def ensure(body, name, namespace, spec, **_):
    api = kubernetes.client.ApiClient()
    for api_version, kind, child in children(name, spec):
        child.update(apiVersion=api_version, kind=kind)
        kopf.adopt(child, owner=body)
        try:
            kubernetes.utils.create_from_dict(api, child, namespace=namespace)
        except kubernetes.utils.FailToCreateError as e:
            if any(x.status != 409 for x in e.api_exceptions):
                raise


@kopf.on.field(GROUP, VERSION, PLURAL, field="spec.image")
def image(name, namespace, new, old, **_):
    if old is not None:
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": new}]}}}}
        kubernetes.client.AppsV1Api().patch_namespaced_deployment(name, namespace, patch)


def owned(meta, **_):
    return any(r.get("kind") == "Website" for r in meta.get("ownerReferences", []))


@kopf.on.delete("", "v1", "configmaps", when=owned, optional=True)
@kopf.on.delete("apps", "v1", "deployments", when=owned, optional=True)
@kopf.on.delete("", "v1", "services", when=owned, optional=True)
def recreate(meta, namespace, **_):
    owner = next(r for r in meta["ownerReferences"] if r["kind"] == "Website")
    try:
        website = kubernetes.client.CustomObjectsApi().get_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, owner["name"])
    except kubernetes.client.ApiException as e:
        if e.status == 404:
            return
        raise
    ensure(website, owner["name"], namespace, website["spec"])
