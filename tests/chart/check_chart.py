"""Offline checks of charts/webdata (run by tests/tests/chart.rs with .venv's Python).

1. charts/webdata/crds/ holds exactly the generated crds/ files.
2. `helm lint --strict` (helm-python-sdk, Helm as a library) has no warning or error.
3. The chart renders with several value sets; every manifest passes
   kubernetes-validate --strict (Kubernetes 1.32 schemas), the WorkerPool
   validates against the generated CRD schema, and each set renders what it should.
4. The sample CrawlJob/WorkerPool/CrawlSchedule YAMLs in examples/kubernetes/ validate against
   the generated CRD schemas, and each file in tests/chart/invalid/ is rejected
   with the error its `# expect:` line names.
5. RBAC is least privilege: namespaced Roles, no wildcards.

Prints `chart checks passed` and exits 0, or lists every failure and exits 1.
"""

import base64
import pathlib
import sys

import helm_python as helm
import jsonschema
import kubernetes_validate
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "webdata"
KUBE = "1.32.0"
failures = []


def check(cond, message):
    if not cond:
        failures.append(message)


def k8s_to_jsonschema(s):
    """A structural OpenAPI v3 schema as JSON Schema (pruning = no unknown fields)."""
    if isinstance(s, dict):
        s = {k: k8s_to_jsonschema(v) for k, v in s.items() if k != "x-kubernetes-validations"}
        if s.pop("nullable", False) and "type" in s:
            s["type"] = [s["type"], "null"]
        if s.pop("x-kubernetes-int-or-string", False):
            s["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        if s.get("x-kubernetes-preserve-unknown-fields"):
            s.setdefault("additionalProperties", True)
        if s.get("type") == "object" and "properties" in s:
            s.setdefault("additionalProperties", False)
        return s
    if isinstance(s, list):
        return [k8s_to_jsonschema(x) for x in s]
    return s


# 1. CRDs in the chart are the generated ones.
generated = {p.name: p.read_bytes() for p in (ROOT / "crds").glob("*.yaml")}
in_chart = {p.name: p.read_bytes() for p in (CHART / "crds").glob("*.yaml")}
check(len(generated) == 3, f"crds/ should hold 3 CRDs, has {sorted(generated)}")
check(generated == in_chart,
      "charts/webdata/crds/ differs from crds/: run `webdata-operator crd --out-dir crds` and copy crds/*.yaml into the chart")

# CRD schemas by kind; the CRDs themselves are valid Kubernetes objects.
schemas = {}
for name, body in generated.items():
    crd = yaml.safe_load(body)
    try:
        kubernetes_validate.validate(crd, KUBE, strict=True)
    except Exception as e:  # noqa: BLE001 - any validation error is a failure
        failures.append(f"{name}: {e}")
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    schema = k8s_to_jsonschema(version["schema"]["openAPIV3Schema"])
    schema.setdefault("properties", {}).update(
        metadata={"type": "object"}, apiVersion={"type": "string"}, kind={"type": "string"})
    schemas[crd["spec"]["names"]["kind"]] = schema


def cr_errors(doc):
    schema = schemas.get(doc.get("kind"))
    if schema is None:
        return [f"no CRD for kind {doc.get('kind')}"]
    return [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(doc)]


def validate(doc, where):
    if str(doc.get("apiVersion", "")).startswith("webdata.io/"):
        for e in cr_errors(doc):
            failures.append(f"{where}: {doc['kind']}/{doc['metadata']['name']}: {e}")
        return
    try:
        kubernetes_validate.validate(doc, KUBE, strict=True)
    except Exception as e:  # noqa: BLE001
        failures.append(f"{where}: {doc.get('kind')}/{doc.get('metadata', {}).get('name')}: {e}")


# 2. Lint.
report = helm.lint(str(CHART), {}, strict=True, kube_version="v" + KUBE)
check(not report["errors"] and all(m["severity"] < 2 for m in report["messages"]), f"helm lint: {report}")

# 3. Renders.
chart = helm.Chart.load(str(CHART))
VALUE_SETS = {
    "defaults": {},
    "external-postgres-ingress": {
        "postgres": {"url": "postgres://u:p@db.internal:5432/webdata", "bundled": {"enabled": False}},
        "api": {"ingress": {"enabled": True, "className": "nginx", "host": "wd.example.org", "tlsSecret": "wd-tls"}},
        "allowPrivateNetworks": "10.0.0.0/8",
    },
    "no-browsers-external-autoscaling": {
        "workerPool": {"browsers": {"min": 0, "max": 0}, "autoscaling": "External"},
        "operator": {"replicas": 2},
    },
    "existing-secret": {"auth": {"existingSecret": "my-webdata"}, "postgres": {"bundled": {"enabled": False}}},
}


def env_of(doc):
    c = doc["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env", [])}


for set_name, values in VALUE_SETS.items():
    out = chart.render(values, name="wd", namespace="crawl", is_install=True)
    docs = [d for path, m in out.items() if path.endswith(".yaml") for d in yaml.safe_load_all(m) if d]
    for d in docs:
        validate(d, set_name)
    by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    notes = next((m for p, m in out.items() if p.endswith("NOTES.txt")), "")
    check("port-forward" in notes and "bootstrap-key" in notes and "/v1/team/credit-usage" in notes,
          f"{set_name}: NOTES.txt does not say how to get a key and make a first call")
    api = by.get(("Deployment", "wd-webdata-api"))
    op = by.get(("Deployment", "wd-webdata-operator"))
    check(api is not None and op is not None, f"{set_name}: API or operator Deployment missing: {sorted(by)}")
    if api is None or op is None:
        continue
    api_env, op_env = env_of(api), env_of(op)
    check(api_env.get("WEBDATA_KUBE") == "on", f"{set_name}: API not in cluster mode")
    check(api["spec"]["template"]["spec"]["serviceAccountName"] == "wd-webdata-api", f"{set_name}: API service account")
    check(op["spec"]["template"]["spec"]["serviceAccountName"] == "wd-webdata-operator", f"{set_name}: operator service account")
    secret_name = values.get("auth", {}).get("existingSecret", "wd-webdata")
    check(op_env.get("WEBDATA_WORKER_DATABASE_SECRET") == f"{secret_name}/database-url",
          f"{set_name}: workers must read the database URL from {secret_name}")
    check(api_env["WEBDATA_DATABASE_URL"]["secretKeyRef"]["name"] == secret_name, f"{set_name}: API database secret")
    pool = by.get(("WorkerPool", "default"))
    check(pool is not None, f"{set_name}: default WorkerPool missing")
    sts = by.get(("StatefulSet", "wd-webdata-postgres"))
    secret = by.get(("Secret", "wd-webdata"))
    if set_name == "defaults":
        check(sts is not None, "defaults: bundled Postgres StatefulSet missing")
        check(secret is not None and {"database-url", "admin-token", "bootstrap-key", "postgres-password"} <= set(secret["data"]),
              f"defaults: Secret keys {secret and sorted(secret['data'])}")
        key = base64.b64decode(secret["data"]["bootstrap-key"]).decode()
        check(key.startswith("wd_") and len(key) == 46, f"defaults: bootstrap key {key!r} is not a webdata key")
        url = base64.b64decode(secret["data"]["database-url"]).decode()
        check(url.startswith("postgres://webdata:") and "@wd-webdata-postgres:5432/webdata" in url, f"defaults: {url}")
        check(api_env.get("WEBDATA_WEBDRIVER_URL") == "http://default-browsers:4444", "defaults: API renders via the pool browsers")
        check(("Ingress", "wd-webdata") not in by, "defaults: no Ingress unless enabled")
    if set_name == "external-postgres-ingress":
        check(sts is None, "external Postgres: no StatefulSet")
        url = base64.b64decode(secret["data"]["database-url"]).decode()
        check(url == "postgres://u:p@db.internal:5432/webdata", f"external Postgres URL: {url}")
        check("postgres-password" not in secret["data"], "external Postgres: no bundled password")
        ing = by.get(("Ingress", "wd-webdata"))
        check(ing is not None and ing["spec"]["tls"][0]["secretName"] == "wd-tls", "ingress with TLS")
        check(api_env.get("WEBDATA_PUBLIC_URL") == "https://wd.example.org", "public URL from the ingress")
        check(op_env.get("WEBDATA_WORKER_ALLOW_PRIVATE_NETWORKS") == "10.0.0.0/8", "workers' private networks")
    if set_name == "no-browsers-external-autoscaling":
        check(pool["spec"]["autoscaling"] == "External" and pool["spec"]["browsers"]["max"] == 0, "pool values")
        check(api_env.get("WEBDATA_BROWSER") == "off", "no browsers: the API renders nothing")
        check(op["spec"]["replicas"] == 2, "two operator replicas (leader election)")
    if set_name == "existing-secret":
        check(secret is None, "existing secret: the chart makes none")

    # 5. Least-privilege RBAC.
    for d in docs:
        check(d["kind"] not in ("ClusterRole", "ClusterRoleBinding"), f"{set_name}: {d['kind']} is not namespaced")
        if d["kind"] == "Role":
            for rule in d["rules"]:
                for field in ("apiGroups", "resources", "verbs"):
                    check("*" not in rule[field], f"{set_name}: wildcard in Role {d['metadata']['name']}")
    api_role = by.get(("Role", "wd-webdata-api"))
    check(api_role is not None and api_role["rules"] == [
        {"apiGroups": ["webdata.io"], "resources": ["crawljobs"], "verbs": ["create", "get", "patch"]}],
        f"{set_name}: the API may only create, get and patch CrawlJobs: {api_role}")

# 4. Samples validate; invalid ones are rejected for the right reason.
samples = sorted((ROOT / "examples" / "kubernetes").glob("*.yaml"))
check(len(samples) >= 2, "examples/kubernetes should hold a CrawlJob and a WorkerPool")
for f in samples:
    for doc in yaml.safe_load_all(f.read_text()):
        if doc:
            errors = cr_errors(doc)
            check(not errors, f"{f.name}: {errors}")
invalid = sorted((ROOT / "tests" / "chart" / "invalid").glob("*.yaml"))
check(len(invalid) >= 5, "tests/chart/invalid should hold invalid samples")
for f in invalid:
    text = f.read_text()
    expect = next((l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith("# expect:")), None)
    errors = cr_errors(yaml.safe_load(text))
    check(errors, f"{f.name} should be rejected but validates")
    check(expect is None or any(expect in e for e in errors), f"{f.name}: expected {expect!r} in {errors}")

if failures:
    print("chart checks failed:")
    for m in failures:
        print(" -", m)
    sys.exit(1)
print(f"chart checks passed: {len(VALUE_SETS)} value sets, {len(samples)} samples, {len(invalid)} invalid samples rejected")
