"""The offline demo agent, as a LangGraph server serves it (``langgraph dev`` reads ``langgraph.json``).

The server gives the graph its own checkpointer (each thread is kept), so the
agent is built without one. Put your own model, tools and style here.
"""

from langchain_refs.apps.demo.agent import build_demo_agent

agent = build_demo_agent()
