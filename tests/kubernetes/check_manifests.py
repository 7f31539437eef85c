#!/usr/bin/env python3
"""check_manifests.py - kubernetes.manifests: the manifests of deploy/kubernetes checked offline,
as far as that can be done without a cluster (docs/clusters.md says what was not tested).

    check_manifests.py GPUPRIO MANIFEST...

Each document must be of a kind known here, with its required fields, and no field that the
Kubernetes API (v1.28+) does not define for its object, at every level of the objects used (so a
misspelt field fails, as the API server's strict field validation would fail it); names follow
the API's rules (DNS-1123); a DaemonSet's selector matches its template's labels; every volume
mount names a volume of the Pod; hostPath paths are absolute, with a type the API accepts. The
gpuprio parts: every CDI annotation (cdi.k8s.io/NAME, on a Pod or added by a policy) names a
device of the spec `gpuprio cdi` writes, the DaemonSet writes that spec where the runtimes look
(/etc/cdi or /var/run/cdi), and its ConfigMap's gpuprio.conf is accepted by gpuprio itself
(`gpuprio doctor --json`, with board_dir pointed at a directory made here, as root). Prints one
line per finding and "N passed, N failed".
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from findings import finding, summary  # noqa: E402 (tests/findings.py, found through the path)

# The fields the API defines, for the objects these manifests use. A value of None: any content
# (a map of the user's keys: labels, annotations, data; or a scalar); a dict: an object whose
# keys must be among these; a list of one dict: a list of such objects.
STR = None
OBJECT_META = {"name": STR, "namespace": STR, "labels": STR, "annotations": STR,
               "generateName": STR}
LABEL_SELECTOR = {"matchLabels": STR, "matchExpressions": [{"key": STR, "operator": STR,
                                                             "values": STR}]}
SECURITY_CONTEXT = {"allowPrivilegeEscalation": STR, "readOnlyRootFilesystem": STR,
                    "runAsUser": STR, "runAsGroup": STR, "runAsNonRoot": STR,
                    "privileged": STR, "capabilities": {"add": STR, "drop": STR},
                    "seccompProfile": {"type": STR, "localhostProfile": STR}}
POD_SECURITY_CONTEXT = {"runAsUser": STR, "runAsGroup": STR, "runAsNonRoot": STR,
                        "fsGroup": STR, "supplementalGroups": STR,
                        "seccompProfile": {"type": STR, "localhostProfile": STR}}
CONTAINER = {"name": STR, "image": STR, "imagePullPolicy": STR, "command": STR, "args": STR,
             "workingDir": STR,
             "env": [{"name": STR, "value": STR, "valueFrom": STR}],
             "resources": {"limits": STR, "requests": STR},
             "securityContext": SECURITY_CONTEXT,
             "volumeMounts": [{"name": STR, "mountPath": STR, "readOnly": STR,
                               "subPath": STR, "mountPropagation": STR}],
             "ports": [{"containerPort": STR, "name": STR, "protocol": STR}]}
VOLUME = {"name": STR, "hostPath": {"path": STR, "type": STR},
          "configMap": {"name": STR, "items": STR, "defaultMode": STR, "optional": STR},
          "emptyDir": {"medium": STR, "sizeLimit": STR}}
POD_SPEC = {"containers": [CONTAINER], "initContainers": [CONTAINER], "volumes": [VOLUME],
            "nodeSelector": STR, "tolerations": [{"key": STR, "operator": STR, "value": STR,
                                                  "effect": STR, "tolerationSeconds": STR}],
            "priorityClassName": STR, "securityContext": POD_SECURITY_CONTEXT,
            "serviceAccountName": STR, "hostPID": STR, "hostIPC": STR, "restartPolicy": STR,
            "terminationGracePeriodSeconds": STR}
KINDS = {
    ("v1", "Namespace"): {"apiVersion": STR, "kind": STR, "metadata": OBJECT_META},
    ("v1", "ConfigMap"): {"apiVersion": STR, "kind": STR, "metadata": OBJECT_META,
                          "data": STR},
    ("v1", "Pod"): {"apiVersion": STR, "kind": STR, "metadata": OBJECT_META, "spec": POD_SPEC},
    ("apps/v1", "DaemonSet"): {
        "apiVersion": STR, "kind": STR, "metadata": OBJECT_META,
        "spec": {"selector": LABEL_SELECTOR,
                 "updateStrategy": {"type": STR, "rollingUpdate": STR},
                 "minReadySeconds": STR,
                 "template": {"metadata": OBJECT_META, "spec": POD_SPEC}}},
    # Kyverno's policy (kyverno.io/v1): the parts the policy here uses.
    ("kyverno.io/v1", "ClusterPolicy"): {
        "apiVersion": STR, "kind": STR, "metadata": OBJECT_META,
        "spec": {"background": STR, "rules": [{
            "name": STR,
            "match": {"any": [{"resources": {"kinds": STR, "namespaces": STR}}]},
            "preconditions": {"all": [{"key": STR, "operator": STR, "value": STR}]},
            "mutate": {"patchStrategicMerge": STR}}]}},
}
# Required fields, by path.
REQUIRED = {
    "Namespace": ["metadata.name"],
    "ConfigMap": ["metadata.name", "metadata.namespace"],
    "Pod": ["metadata.name", "spec.containers"],
    "DaemonSet": ["metadata.name", "metadata.namespace", "spec.selector",
                  "spec.template.spec.containers"],
    "ClusterPolicy": ["metadata.name", "spec.rules"],
}
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
HOSTPATH_TYPES = {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket",
                  "CharDevice", "BlockDevice"}
PULL_POLICIES = {"Always", "IfNotPresent", "Never"}
CDI_ANNOTATION = re.compile(r"^cdi\.k8s\.io/[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?$")



def check_fields(value, schema, where):
    """Every key of value among schema's, recursively; lists and maps where the API has them."""
    if schema is None:
        return
    if isinstance(schema, list):
        finding(isinstance(value, list), f"{where}: a list expected")
        for i, item in enumerate(value if isinstance(value, list) else []):
            check_fields(item, schema[0], f"{where}[{i}]")
        return
    if not isinstance(value, dict):
        finding(False, f"{where}: an object expected, got {type(value).__name__}")
        return
    for key, sub in value.items():
        if key not in schema:
            finding(False, f"{where}.{key}: no such field")
        else:
            check_fields(sub, schema[key], f"{where}.{key}")


def get(doc, path):
    for part in path.split("."):
        if not isinstance(doc, dict) or part not in doc:
            return None
        doc = doc[part]
    return doc


def cdi_devices(gpuprio):
    out = subprocess.run([gpuprio, "cdi"], check=True, capture_output=True, text=True,
                         env=dict(os.environ, GPUPRIO_CONFIG="/nonexistent")).stdout
    spec = yaml.safe_load(out)
    return {f"{spec['kind']}={d['name']}" for d in spec["devices"]}


def check_annotations(annotations, where, devices):
    for key, value in (annotations or {}).items():
        if not key.startswith("cdi.k8s.io/"):
            continue
        finding(bool(CDI_ANNOTATION.match(key)), f"{where}: annotation key '{key}'")
        for device in str(value).split(","):
            finding(device.strip() in devices,
                    f"{where}: '{device}' is not a device of gpuprio cdi's spec "
                    f"({', '.join(sorted(devices))})")


def check_pod_spec(spec, where):
    volumes = {v.get("name"): v for v in spec.get("volumes", [])}
    for v in volumes.values():
        hp = v.get("hostPath")
        if hp:
            finding(str(hp.get("path", "")).startswith("/"),
                    f"{where}: volume {v['name']}: hostPath.path must be absolute")
            finding(hp.get("type", "") in HOSTPATH_TYPES,
                    f"{where}: volume {v['name']}: hostPath.type '{hp.get('type')}'")
    names = set()
    for c in spec.get("initContainers", []) + spec.get("containers", []):
        cw = f"{where}: container {c.get('name')}"
        finding(bool(DNS_LABEL.match(str(c.get("name", "")))), f"{cw}: name")
        finding(c.get("name") not in names, f"{cw}: the name twice")
        names.add(c.get("name"))
        finding(bool(c.get("image")), f"{cw}: no image")
        finding(c.get("imagePullPolicy", "IfNotPresent") in PULL_POLICIES,
                f"{cw}: imagePullPolicy")
        for key in ("command", "args"):
            if key in c:
                finding(isinstance(c[key], list) and all(isinstance(x, str) for x in c[key]),
                        f"{cw}: {key} must be a list of strings")
        for m in c.get("volumeMounts", []):
            finding(m.get("name") in volumes,
                    f"{cw}: mount of volume '{m.get('name')}', which the Pod does not have")
            finding(str(m.get("mountPath", "")).startswith("/"), f"{cw}: mountPath")
    return volumes


def check_conf(gpuprio, text, where):
    if os.geteuid() != 0:
        print(f"skipped: {where}: gpuprio.conf is checked as root only (root's file)")
        return
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        board = os.path.join(d, "boards")
        os.mkdir(board)
        os.chmod(board, 0o1777)
        lines = [f"board_dir = {board}" if re.match(r"^\s*board_dir\s*=", line) else line
                 for line in text.splitlines()]
        conf = os.path.join(d, "gpuprio.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(conf, 0o644)
        r = subprocess.run([gpuprio, "doctor", "--json"], capture_output=True, text=True,
                           env=dict(os.environ, GPUPRIO_CONFIG=conf))
        used = json.loads(r.stdout)["config"]["used"] if r.stdout.strip() else None
        finding(used is True, f"{where}: gpuprio does not use the file ({r.stderr.strip()})")


def main():
    gpuprio, paths = sys.argv[1], sys.argv[2:]
    devices = cdi_devices(gpuprio)
    writes_spec = False
    for path in paths:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        finding(bool(docs), f"{path}: no document")
        for i, doc in enumerate(docs):
            where = f"{os.path.basename(path)}[{i}]"
            if not isinstance(doc, dict):
                finding(False, f"{where}: not an object")
                continue
            key = (doc.get("apiVersion"), doc.get("kind"))
            if key not in KINDS:
                finding(False, f"{where}: unknown apiVersion/kind {key}")
                continue
            where = f"{os.path.basename(path)}: {doc['kind']} {get(doc, 'metadata.name')}"
            check_fields(doc, KINDS[key], where)
            for req in REQUIRED[doc["kind"]]:
                finding(get(doc, req) is not None, f"{where}: {req} is required")
            name, ns = get(doc, "metadata.name"), get(doc, "metadata.namespace")
            finding(bool(DNS_SUBDOMAIN.match(str(name))) and len(str(name)) <= 253,
                    f"{where}: metadata.name '{name}'")
            if ns is not None:
                finding(bool(DNS_LABEL.match(ns)), f"{where}: metadata.namespace '{ns}'")
            check_annotations(get(doc, "metadata.annotations"), where, devices)
            if doc["kind"] == "Pod":
                check_pod_spec(doc["spec"], where)
            if doc["kind"] == "ConfigMap" and "gpuprio.conf" in (doc.get("data") or {}):
                check_conf(gpuprio, doc["data"]["gpuprio.conf"], where)
            if doc["kind"] == "DaemonSet":
                tmpl = doc["spec"]["template"]
                labels = get(tmpl, "metadata.labels") or {}
                for k, v in (get(doc, "spec.selector.matchLabels") or {}).items():
                    finding(labels.get(k) == v,
                            f"{where}: selector {k}={v} does not match the template's labels")
                volumes = check_pod_spec(tmpl["spec"], where)
                for c in tmpl["spec"].get("initContainers", []):
                    script = " ".join(c.get("command", []) + c.get("args", []))
                    # A file bind-mounted on its own (hostPath File, FileOrCreate) is a mount
                    # point: install and mv remove or rename it, which fails with EBUSY and ends
                    # the script; it can only be written in place.
                    for mnt in c.get("volumeMounts", []):
                        hp = volumes.get(mnt.get("name"), {}).get("hostPath") or {}
                        path = str(mnt.get("mountPath", ""))
                        if hp.get("type") in ("File", "FileOrCreate"):
                            finding(not re.search(r"\b(install|mv)\b[^\n;&|]*\s" + re.escape(path)
                                                  + r"(\s|$)", script, re.M),
                                    f"{where}: container {c.get('name')} replaces {path}, a "
                                    "single-file mount (EBUSY): write it in place (cat > FILE)")
                    m = re.search(r"gpuprio cdi --output (\S+)", script)
                    if not m:
                        continue
                    writes_spec = True
                    out = m.group(1)
                    finding(out in ("/etc/cdi", "/var/run/cdi"),
                            f"{where}: the spec goes to {out}, where no runtime looks")
                    host = [v["hostPath"]["path"] for v in volumes.values() if "hostPath" in v
                            for mnt in c.get("volumeMounts", [])
                            if mnt["name"] == v["name"] and mnt["mountPath"] == out]
                    finding(host == [out], f"{where}: {out} is not the node's {out}")
            if doc["kind"] == "ClusterPolicy":
                for rule in doc["spec"]["rules"]:
                    patch = get(rule, "mutate.patchStrategicMerge") or {}
                    ann = get(patch, "metadata.annotations") or {}
                    check_annotations({k.strip("+()"): v for k, v in ann.items()},
                                      f"{where}: rule {rule.get('name')}", devices)
    finding(writes_spec, "no DaemonSet writes the CDI spec (gpuprio cdi --output)")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
