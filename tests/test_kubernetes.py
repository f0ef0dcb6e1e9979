"""deploy/kubernetes: every manifest valid against Kubernetes' own schemas (strict: an
unknown or misspelt field fails), offline - `kubernetes-validate`, pinned in the test
tools, ships the schemas of each Kubernetes release in the package - and saying what
docs/deployment.md says: replicas behind a Service and a PodDisruptionBudget, probes on
/livez and /readyz, the image's non-root user, limits, every secret the service reads
from the Secret, a config the service loads."""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from adapters.registry import load_settings
from testkit import ROOT
from testkit.environment import service_variables

MANIFESTS = ROOT / "deploy" / "kubernetes"
VERSIONS = ("1.29.0", "1.37.0")
"""The oldest Kubernetes release still maintained by the large providers when this was
written, and the newest the pinned validator ships."""


def documents() -> list[tuple[str, dict[str, Any]]]:
    """(file, resource) for every resource the kustomization applies."""
    kustomization = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    found = []
    for name in kustomization["resources"]:
        for doc in yaml.safe_load_all((MANIFESTS / name).read_text()):
            if doc is not None:
                found.append((name, doc))
    return found


def resource(kind: str, component: str = "bot") -> dict[str, Any]:
    matches = [doc for _, doc in documents() if doc["kind"] == kind and
               doc["metadata"]["labels"].get("app.kubernetes.io/component") == component]
    assert len(matches) == 1, (kind, component)
    return matches[0]


def test_the_kustomization_applies_every_manifest_in_the_folder() -> None:
    listed = set(yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())["resources"])
    present = {p.name for p in MANIFESTS.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present


@pytest.mark.parametrize("version", VERSIONS)
def test_every_manifest_is_valid_against_the_kubernetes_schema(version: str) -> None:
    kinds = []
    for name, doc in documents():
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            pytest.fail(f"{name}: {doc['kind']} {doc['metadata']['name']}: "
                        f"{'.'.join(map(str, error.path))}: {error.message}")
        kinds.append(doc["kind"])
    assert sorted(kinds) == ["ConfigMap", "Deployment", "NetworkPolicy",
                             "PodDisruptionBudget", "Service", "Service", "StatefulSet"]


def test_the_validator_refuses_a_broken_deployment() -> None:
    """The check above can fail: a misspelt field and a wrong type are both caught."""
    deployment = resource("Deployment")
    misspelt = copy.deepcopy(deployment)
    misspelt["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
    wrong_type = copy.deepcopy(deployment)
    wrong_type["spec"]["replicas"] = "three"
    for broken in (misspelt, wrong_type):
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return dict(containers[0])


def test_the_deployment_runs_replicas_as_the_images_user_with_probes_and_limits() -> None:
    deployment = resource("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = _container(deployment)
    assert deployment["spec"]["replicas"] >= 2
    dockerfile = (ROOT / "Dockerfile").read_text()
    uid = re.search(r"useradd [^\n]*--uid (\d+)", dockerfile)
    gid = re.search(r"groupadd [^\n]*--gid (\d+)", dockerfile)
    assert uid and gid
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == int(uid[1])
    assert pod["securityContext"]["runAsGroup"] == int(gid[1])
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert container["startupProbe"]["httpGet"]["path"] == "/livez"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    limits, requests = container["resources"]["limits"], container["resources"]["requests"]
    assert "memory" in limits and {"cpu", "memory"} <= set(requests)
    port = container["ports"][0]
    service = resource("Service")
    assert service["spec"]["ports"][0]["targetPort"] in (port["name"], port["containerPort"])
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    for selector in (service["spec"]["selector"],
                     resource("PodDisruptionBudget")["spec"]["selector"]["matchLabels"],
                     deployment["spec"]["selector"]["matchLabels"]):
        assert selector.items() <= labels.items()
    # A drain never takes every replica at once.
    assert resource("PodDisruptionBudget")["spec"]["maxUnavailable"] < \
        deployment["spec"]["replicas"]


def test_every_secret_the_service_reads_comes_from_the_secret() -> None:
    """A variable the Deployment does not name never reaches the pods: a GitHub App or
    the narrator's key would be silently off."""
    env = {item["name"]: item for item in _container(resource("Deployment"))["env"]}
    missing = service_variables() - set(env)
    assert missing == set()
    for name in service_variables():
        reference = env[name]["valueFrom"]["secretKeyRef"]
        assert reference == {"name": "prdigest", "key": name, "optional": True}


def test_the_configmaps_config_is_one_the_service_loads(tmp_path: Path) -> None:
    data = resource("ConfigMap")["data"]
    path = tmp_path / "prdigest.toml"
    path.write_text(data["prdigest.toml"])
    config = load_settings(path)
    assert config.channels and config.repos
    assert config.server.public_url.startswith("https://")  # Telegram's webhook needs it
    assert tomllib.loads(data["prdigest.toml"])  # plain TOML, nothing templated
    mount = {m["name"]: m["mountPath"] for m in _container(resource("Deployment"))
             ["volumeMounts"]}
    args = _container(resource("Deployment"))["args"]
    assert args[args.index("--config") + 1] == f"{mount['config']}/prdigest.toml"


def test_redis_is_run_so_that_nothing_prdigest_keeps_is_evicted() -> None:
    args = _container(resource("StatefulSet", "redis"))["args"]
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction"
    assert args[args.index("--appendonly") + 1] == "yes"
