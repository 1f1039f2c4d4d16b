"""A function node's parameters are checked by adapters built once per type hint, not
at every run (issue 55's 10-node graph: seven typed parameters a run), and what they
check is unchanged: a value coerced as its hint says, a refused one a
WorkflowDataError, a hint that cannot be kept (unhashable) still checked."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from pydantic import TypeAdapter

from adk_actors import Content
from adk_actors.engine import SessionView, run_invocation
from adk_actors.workflow import START, Workflow, WorkflowDataError, _node_data, node


def _outputs(graph: Workflow, state: dict[str, Any] | None = None) -> list[Any]:
    async def go() -> list[Any]:
        session = SessionView(state=dict(state or {}))
        return [e.output async for e in run_invocation(graph, session, Content.user("go"), invocation_id="t-1")
                if e.output is not None]
    return asyncio.run(go())


def count_words(node_input: str, limit: int) -> dict[str, int]:
    return {"words": len(node_input.split()), "limit": limit}


def test_a_nodes_parameters_are_adapted_by_adapters_built_once_across_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Any] = []
    init = TypeAdapter.__init__

    def counting(self: TypeAdapter[Any], hint: Any, *args: Any, **kwargs: Any) -> None:
        built.append(hint)
        init(self, hint, *args, **kwargs)

    monkeypatch.setattr(TypeAdapter, "__init__", counting)
    _node_data._kept_adapter.cache_clear()  # none kept from other tests
    graph = Workflow(name="words", edges=[(START, node(count_words))])
    for _ in range(5):
        assert _outputs(graph, {"limit": "7"})[-1] == {"words": 1, "limit": 7}  # "7" coerced to int
    assert sorted(map(str, built)) == ["<class 'int'>", "<class 'str'>"]  # once each, not once a run


def test_a_value_its_hint_refuses_still_fails_the_node_with_a_data_error() -> None:
    graph = Workflow(name="words", edges=[(START, node(count_words))])
    with pytest.raises(WorkflowDataError, match="parameter 'limit'"):
        _outputs(graph, {"limit": "many"})
    with pytest.raises(WorkflowDataError, match="parameter 'limit'"):
        _outputs(graph, {"limit": "many"})  # the kept adapter refuses it again


def test_an_unhashable_hint_is_checked_each_time_without_being_kept() -> None:
    hint = Annotated[int, {"unhashable": []}]
    assert _node_data.adapter(hint).validate_python("3") == 3
    assert _node_data.adapter(hint) is not _node_data.adapter(hint)
    assert _node_data.adapter(list[int]) is _node_data.adapter(list[int])


def test_unions_that_compare_equal_but_differ_in_order_keep_their_own_adapters() -> None:
    # typing says ``float | int == int | float``; pydantic tries a union's members in order
    assert _node_data.adapter(float | int).validate_python("1") == 1.0
    assert type(_node_data.adapter(int | float).validate_python("1")) is int
    assert type(_node_data.adapter(float | int).validate_python("1")) is float
