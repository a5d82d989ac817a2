"""The kit's AWS clients, built on one botocore session, behave as boto3's would: the same credentials
from the environment, the same services known from the same data paths, a working client."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from botocore.credentials import EnvProvider
from botocore.loaders import Loader

from lambda_mcp.storage import aws_clients
from lambda_mcp.storage.aws_clients import environment_credentials

ENVIRONMENTS = [
    {"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "session"},
    {"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"},
    {"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": ""},
    {
        "AWS_ACCESS_KEY_ID": "AKID",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_SECURITY_TOKEN": "old",
        "AWS_SESSION_TOKEN": "new",
    },
    {
        "AWS_ACCESS_KEY_ID": "AKID",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_SECURITY_TOKEN": "",
        "AWS_SESSION_TOKEN": "new",
    },
    {"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_ACCOUNT_ID": "123456789012"},
]


@pytest.mark.parametrize("environ", ENVIRONMENTS)
def test_static_environment_credentials_are_those_botocore_finds_first(environ: dict[str, str]) -> None:
    expected = EnvProvider(environ=environ).load()
    found = environment_credentials(environ)
    assert found is not None
    assert (found["access_key"], found["secret_key"]) == (expected.access_key, expected.secret_key)
    assert (found.get("token"), found.get("account_id")) == (expected.token, expected.account_id)


@pytest.mark.parametrize(
    "environ",
    [
        {},  # none: the chain looks further (config files, the container's endpoint, instance metadata)
        {"AWS_ACCESS_KEY_ID": "AKID"},  # partial: the chain reports it as botocore does
        {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "secret"},
        {
            "AWS_ACCESS_KEY_ID": "AKID",
            "AWS_SECRET_ACCESS_KEY": "secret",
            "AWS_CREDENTIAL_EXPIRATION": "2030-01-01T00:00:00Z",
        },
    ],
)
def test_anything_but_a_static_pair_is_left_to_botocores_chain(environ: dict[str, str]) -> None:
    assert environment_credentials(environ) is None


def _model_dir(root: Path, service: str, version: str, type_name: str, *, zipped: bool = False) -> None:
    folder = root / service / version
    folder.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"metadata": {"apiVersion": version}}).encode()
    if zipped:
        (folder / f"{type_name}.json.gz").write_bytes(gzip.compress(data))
    else:
        (folder / f"{type_name}.json").write_bytes(data)


@pytest.mark.parametrize("type_name", ["service-2", "endpoint-rule-set-1", "paginators-1", "waiters-2"])
def test_the_loader_knows_the_services_botocores_listing_knows(tmp_path: Path, type_name: str) -> None:
    _model_dir(tmp_path, "kitservice", "2020-01-01", type_name)
    _model_dir(tmp_path, "zipped", "2021-01-01", type_name, zipped=True)
    _model_dir(tmp_path, "othertype", "2020-01-01", "unrelated-9")  # a directory without that model
    (tmp_path / "stray.json").write_text("{}")
    ours = aws_clients._loader_class()(extra_search_paths=[str(tmp_path)])
    stock = Loader(extra_search_paths=[str(tmp_path)])
    listed = stock.list_available_services(type_name)
    names = [
        "dynamodb",
        "sqs",
        "sts",
        "s3",
        "kitservice",
        "zipped",
        "othertype",
        "stray.json",
        "nosuch",
        "dynamodb/x",
        "dynamodb/2012-08-10",
        "..",
    ]
    assert {name: name in ours.list_available_services(type_name) for name in names} == {
        name: name in listed for name in names
    }
    assert list(ours.list_available_services(type_name)) == listed  # read in full: botocore's own list
    assert len(ours.list_available_services(type_name)) == len(listed)


def test_the_loader_loads_the_same_models_and_honours_aws_data_path(tmp_path: Path) -> None:
    _model_dir(tmp_path, "kitservice", "2020-01-01", "service-2")
    ours = aws_clients._loader_class()(extra_search_paths=[str(tmp_path)])
    stock = Loader(extra_search_paths=[str(tmp_path)])
    assert ours.load_service_model("kitservice", "service-2") == {"metadata": {"apiVersion": "2020-01-01"}}
    assert ours.load_service_model("dynamodb", "service-2") == stock.load_service_model("dynamodb", "service-2")
    from botocore.exceptions import UnknownServiceError

    with pytest.raises(UnknownServiceError):
        ours.load_service_model("nosuch", "service-2")


def test_a_client_takes_region_endpoint_and_options_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:9")
    client = aws_clients.client("dynamodb", retries={"mode": "standard", "max_attempts": 5}, max_pool_connections=32)
    assert client.meta.region_name == "eu-west-1"
    assert client.meta.endpoint_url == "http://127.0.0.1:9"
    assert client.meta.config.retries == {"mode": "standard", "total_max_attempts": 6}
    assert client.meta.config.max_pool_connections == 32


def test_a_kit_client_reads_and_writes_a_table() -> None:
    from moto import mock_aws

    from lambda_mcp.storage.dynamodb import create_table
    from lambda_mcp.storage.dynamodb._client import default_client

    with mock_aws():
        client = default_client()
        create_table(client, "state")
        client.put_item(TableName="state", Item={"pk": {"S": "a"}, "sk": {"S": "b"}, "v": {"S": "1"}})
        got = client.get_item(TableName="state", Key={"pk": {"S": "a"}, "sk": {"S": "b"}})
    assert got["Item"]["v"] == {"S": "1"}
