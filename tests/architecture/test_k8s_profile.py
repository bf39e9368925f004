"""The Kubernetes profile (pipelines/deploy/k8s/, docs/scale.md) cannot rot unnoticed.

Its instance config, its run config and its manifests are checked against the schemas of the
Dagster, dagster-k8s and Kubernetes client versions pinned in constraints.txt, and against each
other, without a cluster or a database: a renamed or misspelt key, a run config the step-pod
executor no longer takes, or a volume the step pods would not mount fails here.
"""

from __future__ import annotations

import functools
import tomllib
import uuid
from pathlib import PurePosixPath
from typing import Any
from unittest import mock

import dagster as dg
import kubernetes.client
import pytest
import yaml
from dagster._config import process_config, validate_config
from dagster._core.instance.config import dagster_instance_config
from dagster._serdes.config_class import class_from_code_pointer
from dagster_k8s import K8sRunLauncher
from dagster_k8s.container_context import K8sContainerContext
from dagster_k8s.job import UserDefinedDagsterK8sConfig, construct_dagster_k8s_job
from dagster_k8s.models import k8s_model_from_dict, k8s_snake_case_dict

from pipelines.definitions import defs as local_defs
from pipelines.paths import PROJECT_ROOT, SOURCES_ENV, WAREHOUSE_ENV
from pipelines.run import k8s
from tests.helpers import pinned_versions

PROFILE = PROJECT_ROOT / "pipelines" / "deploy" / "k8s"
PYPROJECT = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: Where a step's paths must point: the shared volume (docs/scale.md).
SHARED_ENV = (WAREHOUSE_ENV, SOURCES_ENV, "EDGE_CARBON_SITE")


def _yaml(name: str) -> Any:
    return yaml.safe_load((PROFILE / name).read_text(encoding="utf-8"))


def _manifests() -> dict[tuple[str, str], dict]:
    docs = yaml.safe_load_all((PROFILE / "manifests.yaml").read_text(encoding="utf-8"))
    return {(doc["kind"], doc["metadata"]["name"]): doc for doc in docs if doc}


@functools.cache
def _instance() -> Any:
    """dagster.yaml, validated against Dagster's instance schema (raises on a key it lacks)."""
    config, _ = dagster_instance_config(str(PROFILE))
    return config


def _launcher_config() -> dict:
    return _instance()["run_launcher"]["config"]


RUN_CONFIG = _yaml("run_config.yaml")
MANIFESTS = _manifests()


def _launcher() -> K8sRunLauncher:
    """The run launcher of dagster.yaml, built as the instance would, without a cluster to reach."""
    config = process_config(K8sRunLauncher.config_type(), _launcher_config())
    assert config.success, config.errors
    with mock.patch("dagster_k8s.launcher.load_kubernetes_config"):
        return K8sRunLauncher(**config.value)


def _step_job() -> kubernetes.client.V1Job:
    """The Kubernetes Job the k8s executor starts for a step of build_warehouse: the run
    launcher's settings, then the run config's ``step_k8s_config``, as its step handler merges them."""
    execution = RUN_CONFIG["execution"]["config"]
    assert set(execution) <= {"max_concurrent", "step_k8s_config"}, "merge the run config's other keys here too"
    launcher = _launcher()
    run = dg.DagsterRun(job_name="build_warehouse", run_id=str(uuid.uuid4()))
    executor = K8sContainerContext(
        run_k8s_config=UserDefinedDagsterK8sConfig.from_dict(execution.get("step_k8s_config", {}))
    )
    context = K8sContainerContext.create_for_run(run, launcher, include_run_tags=False).merge(executor)
    assert context.namespace == _launcher_config()["job_namespace"]
    return construct_dagster_k8s_job(
        job_config=context.get_k8s_job_config(None, launcher),
        args=["dagster", "api", "execute_step"],
        job_name="dagster-step-test",
        user_defined_k8s_config=context.run_k8s_config,
        component="step_worker",
    )


def test_the_instance_config_loads_against_dagster_schemas() -> None:
    instance = _instance()
    assert instance["run_launcher"]["module"] == "dagster_k8s" and instance["run_launcher"]["class"] == "K8sRunLauncher"
    assert "postgres" in instance["storage"]
    assert instance["concurrency"]["runs"]["max_concurrent_runs"] == 1  # every run publishes the whole warehouse
    for section in ("run_launcher", "compute_logs", "local_artifact_storage"):
        klass = class_from_code_pointer(instance[section]["module"], instance[section]["class"])
        checked = validate_config(klass.config_type(), instance[section]["config"])
        assert checked.success, f"dagster.yaml {section}: {[e.message for e in checked.errors]}"


def test_the_instance_holds_no_secret() -> None:
    """Secrets reach the pods as environment variables (Secrets as envFrom), never as values here."""
    instance = _instance()
    password = instance["storage"]["postgres"]["postgres_db"]["password"]
    assert password == {"env": "DAGSTER_PG_PASSWORD"}
    assert not [v for v in _launcher_config()["env_vars"] if "TOKEN" in v or "PASSWORD" in v]
    assert _launcher_config()["env_secrets"]


def test_build_warehouse_runs_on_step_pods_with_the_profile_run_config() -> None:
    job = k8s.defs.resolve_job_def("build_warehouse")
    assert job.executor_def.name == "k8s"
    local = local_defs.resolve_job_def("build_warehouse")
    assert set(job.asset_layer.selected_asset_keys) == set(local.asset_layer.selected_asset_keys)
    assert k8s.defs.resolve_job_def("grid_feeds").executor_def.name == "k8s"
    resolved = dg.validate_run_config(job, RUN_CONFIG)  # raises on a key the executor does not take
    assert resolved["execution"]["k8s"]["max_concurrent"] == 4 == k8s.DEFAULT_CONCURRENT_STEPS


def test_step_pods_are_bounded_and_share_the_runs_copy() -> None:
    job = k8s.defs.resolve_job_def("build_warehouse")
    assert dg.validate_run_config(job, {})["execution"]["k8s"]["max_concurrent"] == k8s.DEFAULT_CONCURRENT_STEPS
    with pytest.raises(dg.DagsterConfigMappingFunctionError):
        dg.validate_run_config(job, {"execution": {"config": {"max_concurrent": k8s.MAX_CONCURRENT_STEPS + 1}}})
    with pytest.raises(dg.DagsterInvalidConfigError):
        dg.validate_run_config(job, {"execution": {"config": {"max_concurrency": 1}}})
    # every step opens the run's shared copy; the sensors publish a succeeded run and discard a failed one
    assert k8s.defs.resources["warehouse"].publish == "launcher"
    assert {s.name for s in k8s.defs.sensors or []} == {"power_log_partitions", "publish_succeeded", "discard_failed"}
    assert local_defs.resources["warehouse"].publish == "run"


def test_a_step_pod_writes_the_warehouse_on_the_shared_volume() -> None:
    pod = _step_job().spec.template.spec
    container = pod.containers[0]
    assert container.image == _launcher_config()["job_image"]
    assert pod.service_account_name == _launcher_config()["service_account_name"]
    claims = {v.name: v.persistent_volume_claim.claim_name for v in pod.volumes if v.persistent_volume_claim}
    mounts = {m.mount_path: claims[m.name] for m in container.volume_mounts if m.name in claims}
    env = {e.name: e.value for e in container.env}
    for name in SHARED_ENV:
        on = [path for path in mounts if PurePosixPath(env[name]).is_relative_to(path)]
        assert on, f"{name}={env[name]} is not on a mounted claim ({mounts})"
        pvc = MANIFESTS[("PersistentVolumeClaim", mounts[on[0]])]
        assert pvc["spec"]["accessModes"] == ["ReadWriteMany"], "step pods on any node share the volume"
    secrets = {source.secret_ref.name for source in container.env_from if source.secret_ref}
    assert secrets == set(_launcher_config()["env_secrets"])
    step = RUN_CONFIG["execution"]["config"]["step_k8s_config"]["container_config"]["resources"]
    assert container.resources.requests == step["requests"] and container.resources.limits == step["limits"]
    assert len({v.name for v in pod.volumes}) == len(pod.volumes)


@pytest.mark.parametrize("key", sorted(MANIFESTS), ids=lambda key: "/".join(key))
def test_every_manifest_is_a_valid_kubernetes_object(key: tuple[str, str]) -> None:
    doc = MANIFESTS[key]
    model = getattr(kubernetes.client, f"V1{doc['kind']}")
    k8s_model_from_dict(model, k8s_snake_case_dict(model, doc))  # raises on an unknown key at any depth
    assert doc["metadata"]["namespace"] == _launcher_config()["job_namespace"]


def test_the_code_server_serves_the_atomic_location_in_the_launcher_image() -> None:
    """One run-worker pod per run with the in-process executor (the run publishes once); the
    step-pod location (pipelines.run.k8s) is the opt-in the docs name."""
    import pipelines.definitions as single_pod

    deployment = MANIFESTS[("Deployment", "edge-carbon-code")]
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    args = container["args"]
    assert args[args.index("--module-name") + 1] == single_pod.__name__
    assert k8s.__name__ in (PROFILE / "manifests.yaml").read_text(encoding="utf-8")
    env = {e["name"]: e["value"] for e in container["env"]}
    assert container["image"] == env["DAGSTER_CURRENT_IMAGE"] == _launcher_config()["job_image"]
    launcher_env = dict(v.split("=", 1) for v in _launcher_config()["env_vars"])
    assert {name: env[name] for name in SHARED_ENV} == {name: launcher_env[name] for name in SHARED_ENV}
    assert spec["serviceAccountName"] == _launcher_config()["service_account_name"]
    subjects = MANIFESTS[("RoleBinding", "edge-carbon-launcher")]["subjects"]
    assert {s["name"] for s in subjects} == {spec["serviceAccountName"]}

    (location,) = _yaml("workspace.yaml")["load_from"]
    server = location["grpc_server"]
    service = MANIFESTS[("Service", server["host"])]
    assert server["port"] in {p["port"] for p in service["spec"]["ports"]}
    assert server["port"] in {p["containerPort"] for p in container["ports"]}
    assert server["location_name"] == PYPROJECT["tool"]["dagster"]["code_location_name"]


@pytest.mark.parametrize("name", ["dagster-webserver", "dagster-daemon"])
def test_the_webserver_and_the_daemon_run_this_instance(name: str) -> None:
    """They launch run workers (the launcher's service account), read the storage (its password
    from the Secret) and the compute logs (the volume), with DAGSTER_HOME from the ConfigMap."""
    launcher = _launcher_config()
    spec = MANIFESTS[("Deployment", name)]["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert container["image"] == launcher["job_image"]
    assert spec["serviceAccountName"] == launcher["service_account_name"]
    assert {"secretRef": {"name": "edge-carbon-postgres"}} in container["envFrom"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"]}
    home = PurePosixPath(launcher["dagster_home"])
    assert mounts[str(home / "dagster.yaml")]["configMap"]["name"] == launcher["instance_config_map"]
    assert str(home / "workspace.yaml") in mounts
    assert str(home / "workspace.yaml") in container["args"]
    (data,) = (m["mount_path"] for m in launcher["volume_mounts"])
    (claim,) = (v["persistent_volume_claim"]["claim_name"] for v in launcher["volumes"])
    assert mounts[data]["persistentVolumeClaim"]["claimName"] == claim


def test_the_k8s_extra_is_pinned() -> None:
    pinned = set(pinned_versions())
    extra = PYPROJECT["project"]["optional-dependencies"]["k8s"]
    assert {"dagster-k8s", "dagster-postgres"} <= set(extra)
    assert set(extra) <= pinned


def test_a_sensor_publish_over_a_newer_warehouse_is_refused_and_the_run_launched_again(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Step pods copy the warehouse without the publish lock: a run whose published file moved on
    before its sensor publish is not published over the newer state; the same run goes again."""
    import os

    from pipelines.warehouse.database import publish_run, runs_dir, shared_copy

    published = tmp_path / "edge_carbon.duckdb"
    monkeypatch.setattr(k8s, "SHARED_WAREHOUSE", k8s.Warehouse(publish="launcher", path=str(published)))
    keys = frozenset({dg.AssetKey(["staging", "power_samples"]), dg.AssetKey(["staging", "sources"])})
    run = dg.DagsterRun(job_name="build_warehouse", run_id="run-late", asset_selection=keys, run_config={"ops": {"x": {}}},
                        tags={"dagster/asset_partition_range_start": "a", "dagster/asset_partition_range_end": "b", "dagster/run_key": "k",
                              "team": "grid"})
    for run_id in ("run-first", "run-late"):  # both copy the empty warehouse
        with shared_copy(published, run_id) as con:
            con.execute("create table core.t as select 1 as x")
    assert publish_run(published, "run-first", ok=True, log=__import__("logging").getLogger("test"))
    first = published.read_bytes()
    request = k8s._settle(run, ok=True)
    assert published.read_bytes() == first and os.listdir(runs_dir(published)) == []
    assert isinstance(request, dg.RunRequest)
    assert (request.job_name, request.run_key, dict(request.run_config)) == ("build_warehouse", "rebase:run-late", {"ops": {"x": {}}})
    assert request.tags == {"dagster/asset_partition_range_start": "a", "dagster/asset_partition_range_end": "b", "team": "grid",
                            k8s.REBASE_TAG: "run-late"}
    assert set(request.asset_selection or []) == keys
