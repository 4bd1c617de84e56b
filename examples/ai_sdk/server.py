"""The offline demo agent, served to a ``useChat`` front end over the AI SDK's UI message stream (FastAPI).

Run it from a clone (the example's only extra dependency is FastAPI):

    pip install -e ".[serve,agents]" fastapi
    uvicorn examples.ai_sdk.server:app --port 8001

``POST /api/chat`` takes the body ``useChat``'s default transport sends and
answers with the UI message stream: the agent's search as a tool part, the
answer with ``[n]`` citations, one source part per cited source, and the
passage behind each citation as ``data-citation`` parts (see README.md here).
Each chat is a LangGraph thread (its id is the chat's id): give
``build_app`` a persistent checkpointer and conversations survive a restart.
After ``regenerate()`` or an edited question, the turns the client dropped
are removed from the thread first, so the agent reads what the reader sees.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import StreamingResponse
from starlette.requests import ClientDisconnect

from langchain_refs.apps.ui_stream import (
    QuestionTooLongError,
    citation_numbers_style,
    drop_turns,
    question_of,
    turns_the_client_holds,
    ui_message_chunks,
    ui_message_response,
)


def build_app(agent: Any = None, *, ai7_fields: bool = False) -> FastAPI:
    """The FastAPI app serving ``agent`` (default: the offline demo agent, its threads kept in memory).

    ``agent`` is any LangGraph agent with ``ReferencesMiddleware`` and a
    checkpointer; give its middleware ``citation_numbers_style()`` so that
    the text shows ``[n]`` and the list of sources travels as source parts.
    ``ai7_fields=True`` also sends what only ``ai`` 7 reads (the text part's
    ``citations``); the default stream is read by ``ai`` 5, 6 and 7.
    """
    if agent is None:
        from langgraph.checkpoint.memory import InMemorySaver

        from langchain_refs.apps.demo.agent import build_demo_agent

        agent = build_demo_agent(style=citation_numbers_style(), checkpointer=InMemorySaver())

    app = FastAPI(title="langchain-refs over the AI SDK UI message stream")

    @app.post("/api/chat")
    async def chat(request: Request) -> StreamingResponse:
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            raise HTTPException(415, "send the body as JSON, with Content-Type: application/json")
        try:
            body = await request.json()
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested deeper than Python parses
            raise HTTPException(400, "the body is not JSON") from None
        except ClientDisconnect:  # the client left mid-upload: an answer nobody reads, not a traceback
            raise HTTPException(400, "the client left before sending the whole body") from None
        try:
            chat_id, question = question_of(body)
        except QuestionTooLongError as error:
            raise HTTPException(413, str(error)) from None
        except ValueError as error:  # not the body useChat sends: one line that says what is
            raise HTTPException(400, str(error)) from None
        config = {"configurable": {"thread_id": chat_id}}
        earlier = turns_the_client_holds(body)
        if earlier is not None:  # regenerate() or an edited question: the thread drops the turns the client did
            await drop_turns(agent, config, earlier)
        stream = agent.astream({"messages": [{"role": "user", "content": question}]}, config, stream_mode="messages")
        return ui_message_response(ui_message_chunks(stream, ai7_fields=ai7_fields))

    return app


app = build_app()
