"""The HTTP client lifecycle the Gamma and chat clients share (arena.markets.http_client)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from arena.agents.llm import ChatClient
from arena.markets.gamma import GammaClient
from arena.markets.http_client import USER_AGENT, OwnsHttpClient, json_http_client

from .gamma_server import Reply, serve

RESOLVED = Path(__file__).resolve().parents[1] / "fixtures" / "gamma" / "market_resolved.json"


def test_json_http_client_asks_for_json_as_forecaster_arena() -> None:
    with json_http_client(timeout=7.5) as client:
        assert client.headers["Accept"] == "application/json"
        assert client.headers["User-Agent"] == USER_AGENT
        assert client.timeout == httpx.Timeout(7.5)
        assert client.follow_redirects is False
        assert str(client.base_url) == ""


def test_json_http_client_adds_the_callers_headers_and_options() -> None:
    client = json_http_client(
        timeout=1.0,
        headers={"Authorization": "Bearer x", "Accept": "text/plain"},
        base_url="http://example.test/api",
        follow_redirects=True,
    )
    with client:
        assert client.headers["Authorization"] == "Bearer x"
        assert client.headers["Accept"] == "text/plain"
        assert client.headers["User-Agent"] == USER_AGENT
        assert client.follow_redirects is True
        assert str(client.base_url) == "http://example.test/api/"


class _Owner(OwnsHttpClient):
    def __init__(self) -> None:
        self._client = json_http_client(timeout=1.0)


def test_an_owner_closes_its_client_on_close_or_leaving_a_with_block() -> None:
    closed_by_call = _Owner()
    closed_by_call.close()
    assert closed_by_call._client.is_closed

    with _Owner() as owner:
        assert isinstance(owner, _Owner)
        assert not owner._client.is_closed
    assert owner._client.is_closed


def test_the_owner_closes_its_client_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), _Owner() as owner:
        raise RuntimeError("boom")
    assert owner._client.is_closed


@pytest.mark.parametrize(
    "make",
    [
        lambda: GammaClient("http://127.0.0.1:9"),
        lambda: ChatClient("http://127.0.0.1:9/v1", "key"),
    ],
    ids=["gamma", "chat"],
)
def test_both_api_clients_own_their_http_client(make: Callable[[], OwnsHttpClient]) -> None:
    with make() as client:
        assert isinstance(client, OwnsHttpClient)
        inner = client._client
        assert not inner.is_closed
    assert inner.is_closed


def test_gamma_follows_redirects_with_its_own_timeout() -> None:
    with serve() as server:
        server.script("/markets/1", Reply(301, "", headers={"Location": "/markets/842093"}))
        server.script("/markets/842093", Reply(body=json.loads(RESOLVED.read_text())))
        with GammaClient(server.url, timeout=3.0, min_interval=0.0) as client:
            market = client.get_market("1")
            assert client._client.timeout == httpx.Timeout(3.0)

    assert market is not None and market.id == "842093"
